//! Data larger than the device's memory is `Error::OutOfMemory` from `try_preload`,
//! `try_preload_mut` and `launch!`, before the runtime is asked (libomptarget 19 would end the
//! process): the program keeps running and the earlier preloads stay intact and usable. The
//! data is 4 TiB of address space that is never touched (more than the memory of any machine
//! this runs on: the host plugin's limit is the host's memory and swap, a GPU's its free memory).
//@ run: => h2d=2 d2h=1

use offload::Error;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

const HUGE: usize = 1 << 42;

/// `HUGE` bytes of zeroes from the kernel, reserved but never backed by memory.
fn huge() -> &'static mut [f32] {
    // SAFETY: a fresh anonymous private mapping; NORESERVE commits no memory until touched.
    let p = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            HUGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED, "mmap of 4 TiB of address space");
    // SAFETY: the mapping is readable and writable zeroes, never unmapped.
    unsafe { core::slice::from_raw_parts_mut(p.cast::<f32>(), HUGE / 4) }
}

fn main() -> Result<(), offload::Error> {
    let n = 10_000;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut ys = vec![1.0f32; n];
    let big = huge();
    {
        let x = offload::preload(&xs[..]); // 1 in
        let mut y = offload::preload_mut(&mut ys[..]); // 1 in

        let e = offload::try_preload(&big[..]).err().expect("a 4 TiB preload must fail");
        let Error::OutOfMemory { bytes, available } = e else { panic!("{e:?}") };
        assert_eq!(bytes, HUGE);
        assert!(available < HUGE, "{available}");
        println!("try_preload: {e}");
        let e = offload::try_preload_mut(&mut big[..]).err().expect("must fail");
        assert!(matches!(e, Error::OutOfMemory { bytes: HUGE, .. }), "{e:?}");
        let e = offload::launch!(kernels::saxpy, 1, 32, (1.0f32, &big[..], &mut y));
        assert!(matches!(e, Err(Error::OutOfMemory { bytes: HUGE, .. })), "{e:?}");
        println!("launch!: {}", e.unwrap_err());

        // The earlier mappings are intact.
        offload::launch!(kernels::saxpy, n.div_ceil(128) as u32, 128, (2.0f32, &x, &mut y))?;
    } // 1 out
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 1.0 + 2.0 * i as f32, "y[{i}]");
    }
    println!("ok");
    Ok(())
}
