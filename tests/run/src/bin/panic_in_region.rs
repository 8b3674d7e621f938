//! A panic while a `PreloadMut` lives: unwinding drops the guard, which copies the device data
//! back and releases the mapping, like any other end of the region. So the kernels' results are
//! in the host data after the panic, and nothing stays mapped.
//@ run: => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() {
    let mut v = vec![5u32; 300];
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut dv = offload::preload_mut(&mut v[..]);
        offload::launch!(kernels::increment, 3, 128, (&mut dv,)).unwrap();
        panic!("failure in the middle of the region");
    }));
    assert!(result.is_err());
    assert!(v.iter().all(|&x| x == 6), "{}", v[0]);
    // SAFETY: a lookup in the runtime's table.
    let present = unsafe { offload::sys::omp_target_is_present(v.as_ptr().cast(), 0) };
    assert_eq!(present, 0, "the mapping outlived the panic");
    println!("ok");
}
