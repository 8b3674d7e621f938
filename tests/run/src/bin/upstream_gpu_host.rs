//! Follows rust-lang/rust's tests/codegen-llvm/gpu_offload/gpu_host.rs (and offload_intrinsic.rs,
//! the same program): `_kernel_1` a private `#[no_mangle]` function, launched by the intrinsic
//! form, `offload::intrinsics::offload` for `core::intrinsics::offload`, with the geometry,
//! shared memory and device arguments upstream's intrinsic now takes. Differences: the kernel
//! lives in the kernels file and the launch returns a `Result`. Copies: 1 in, 1 out.
//@ run: => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let mut x = [3.0f32; 256];
    offload::intrinsics::offload(
        kernels::upstream::_kernel_1,
        [1, 1, 1],
        [1, 1, 1],
        0,
        -1,
        (&mut x,),
    )?;
    core::hint::black_box(&x);
    assert!(x.iter().all(|&v| v == 21.0));
    println!("ok: gpu_host.rs");
    Ok(())
}
