//! Follows rust-lang/rust's tests/codegen-llvm/gpu_offload/device_check.rs: `offload!` with
//! `device = 99` and no arguments. Difference: upstream panics; here the launch is
//! `Error::NoSuchDevice`, and device 0 runs. Copies: none.
//@ run: => h2d=0 d2h=0

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use kernels::upstream::kernel;

fn main() -> Result<(), offload::Error> {
    let count = offload::intrinsics::offload_get_num_devices();
    assert!(count > 0);
    let refused = offload::offload! {
        kernel = kernel,
        device = 99,
        args = (),
    };
    assert_eq!(refused, Err(offload::Error::NoSuchDevice { id: 99, count: count as usize }));
    offload::offload!(kernel = kernel, device = 0, args = ())?;
    offload::intrinsics::offload_sync()?;
    println!("ok: device_check.rs");
    Ok(())
}
