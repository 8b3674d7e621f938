//! No device (`OMP_TARGET_OFFLOAD=DISABLED`, which OpenMP defines as no device): preloads and
//! launches are `Error::NoDevice`, `preload` panics with its message, nothing is copied and
//! nothing crashes.
//@ run: => h2d=0 d2h=0 env=OMP_TARGET_OFFLOAD=DISABLED

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::Error;

fn main() {
    let mut v = vec![1u32; 64];
    assert_eq!(offload::Device::count(), 0);
    assert!(offload::device_name().starts_with("no offload device is available"));
    assert!(matches!(offload::try_preload(&v[..]), Err(Error::NoDevice)));
    assert!(matches!(offload::try_preload_mut(&mut v[..]), Err(Error::NoDevice)));
    assert!(matches!(
        offload::launch!(kernels::increment, 1, 64, (&mut v[..],)),
        Err(Error::NoDevice)
    ));
    let panic = std::panic::catch_unwind(|| drop(offload::preload(&[1u32; 4])));
    let message = panic.unwrap_err();
    let message = message.downcast_ref::<String>().unwrap();
    assert!(message.starts_with("offload::preload: no offload device is available"), "{message}");
    println!("ok: {message}");
}
