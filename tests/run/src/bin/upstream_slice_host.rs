//! Follows rust-lang/rust's tests/codegen-llvm/gpu_offload/slice_host.rs: a `&mut [f32]` made
//! from an array, through the intrinsic form, as upstream's program writes it. Copies: 1 in,
//! 1 out.
//@ run: => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let mut x = [0.0f32, 0.0, 0.0, 0.0];
    offload::intrinsics::offload(
        kernels::upstream::slice_foo,
        [1, 1, 1],
        [1, 1, 1],
        0,
        -1,
        ((&mut x) as &mut [f32],),
    )?;
    assert_eq!(x, [0.0, 1.0, 2.0, 3.0]);
    println!("ok: slice_host.rs");
    Ok(())
}
