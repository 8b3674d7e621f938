//! A default device that is none of the runtime's devices (`OMP_DEFAULT_DEVICE` equal to their
//! number, which OpenMP gives the host itself, or past it) is `Error::InvalidDefaultDevice`
//! from every entry point that goes to the default device, and `preload` panics with its
//! message. libomptarget 19 alone would skip every copy on the host's number (a `PreloadMut`
//! whose results never come back) and fail the launches with status -1, and end the process
//! past it ("Device number '7' out of range"). A device named explicitly still works.
//!
//! The program runs itself again with each value, counted from the runtime's devices so that
//! it means the same on any machine. Copies: only the explicit device's, 1 in and 1 out in
//! each of the two children.
//@ run: => h2d=2 d2h=2

use std::process::{Command, Stdio};

use offload::{Device, Error, HostBuffer};

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn child(id: i64) -> Result<(), Error> {
    let count = Device::count();
    let invalid = |e: Error| {
        assert!(
            matches!(e, Error::InvalidDefaultDevice { id: i, count: c } if i == id && c == count),
            "{e:?}"
        );
        e.to_string()
    };
    let mut v = vec![1u32; 64];
    let message = invalid(Device::default_device().unwrap_err());
    let start = format!("the default offload device is {id} (OMP_DEFAULT_DEVICE");
    assert!(message.starts_with(&start), "{message}");
    assert!(message.contains("Device::get"), "{message}");
    assert_eq!(offload::device_name(), format!("no offload device ({message})"));
    invalid(offload::try_preload(&v[..]).err().unwrap());
    invalid(offload::try_preload_mut(&mut v[..]).err().unwrap());
    invalid(offload::launch!(kernels::increment, 1, 64, (&mut v[..],)).unwrap_err());
    invalid(offload::launch!(kernels::scalars_only, 1, 1, (1.0f32, 2u64, 3i32)).unwrap_err());
    invalid(offload::launch_async!(kernels::scalars_only, 1, 1, (1.0f32, 2u64, 3i32)).unwrap_err());
    invalid(HostBuffer::new(16, 0u32).err().unwrap());
    let panic = std::panic::catch_unwind(|| drop(offload::preload(&[1u32; 4]))).unwrap_err();
    let panic = panic.downcast_ref::<String>().unwrap();
    assert_eq!(*panic, format!("offload::preload: {message}"));
    assert_eq!(v, [1; 64], "nothing ran");

    // A device named explicitly: 1 in, 1 out.
    let device = Device::get(0)?;
    {
        let mut dv = device.preload_mut(&mut v[..])?;
        offload::launch!(on device, kernels::increment, 1, 64, (&mut dv,))?;
    }
    assert_eq!(v, [2; 64]);
    println!("child ok: {message}");
    Ok(())
}

fn main() -> Result<(), Error> {
    if std::env::args().nth(1).as_deref() == Some("child") {
        let id = std::env::var("OMP_DEFAULT_DEVICE").unwrap().parse().unwrap();
        return child(id);
    }
    let count = Device::count();
    assert!(count > 0, "no device");
    for id in [count, count + 3] {
        // The child's runtime log goes where the parent's does, for the harness to count.
        let out = Command::new(std::env::current_exe().unwrap())
            .arg("child")
            .env("OMP_DEFAULT_DEVICE", id.to_string())
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "OMP_DEFAULT_DEVICE={id}: {}\n{stdout}", out.status);
        assert!(stdout.contains("child ok"), "{stdout}");
        print!("OMP_DEFAULT_DEVICE={id}: {stdout}");
    }
    println!("ok");
    Ok(())
}
