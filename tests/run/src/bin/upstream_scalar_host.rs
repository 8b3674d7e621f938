//! Follows rust-lang/rust's tests/codegen-llvm/gpu_offload/scalar_host.rs: a scalar argument
//! beside a `&mut` one, through the intrinsic form. Difference: `foo`'s `*mut f32` is a
//! `&mut f32`. Copies: 1 in, 1 out (the scalar travels in its slot).
//@ run: => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let mut x = 0.0f32;
    let k = core::hint::black_box(42.0f32);
    offload::intrinsics::offload(
        kernels::upstream::scalar_foo,
        [1, 1, 1],
        [1, 1, 1],
        0,
        -1,
        (&mut x, k),
    )?;
    assert_eq!(x, 42.0);
    println!("ok: scalar_host.rs");
    Ok(())
}
