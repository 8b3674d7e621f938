//! A guard keeps the device it mapped its data on: a `PreloadMut` made on the default device
//! brings its data back from there, though the default changes while it lives (OpenMP's
//! `omp_set_default_device`). The default changes to the host's own number, none of the
//! runtime's devices: a launch then is `Error::InvalidDefaultDevice`, and a release that went
//! to the default would copy nothing back.
//!
//! Copies: `y` in and out by its preload, `x` in by the launch.
//@ run: => h2d=2 d2h=1

use offload::{Device, Error};

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

unsafe extern "C" {
    fn omp_get_default_device() -> i32;
    fn omp_set_default_device(device: i32);
}

fn main() -> Result<(), Error> {
    let x = vec![1.0f32; 64];
    let mut y = vec![1.0f32; 64];
    // SAFETY: plain queries and settings of the calling thread's default device.
    let before = unsafe { omp_get_default_device() };
    let host = i32::try_from(Device::count()).unwrap();
    {
        let mut dy = offload::preload_mut(&mut y[..]);
        offload::launch!(kernels::saxpy, 1, 64, (2.0f32, &x[..], &mut dy))?;
        unsafe { omp_set_default_device(host) };
        let e = offload::launch!(kernels::saxpy, 1, 64, (2.0f32, &x[..], &mut dy)).unwrap_err();
        assert!(matches!(e, Error::InvalidDefaultDevice { .. }), "{e:?}");
    }
    unsafe { omp_set_default_device(before) };
    assert!(y.iter().all(|&v| v == 3.0), "the results did not come back: {:?}", &y[..4]);
    println!("ok: the results came back from device {before} with the default at {host}");
    Ok(())
}
