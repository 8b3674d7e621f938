//! Follows rust-lang/rust's tests/codegen-llvm/gpu_offload/control_flow.rs: the intrinsic
//! launch of `foo` inside a loop of 100, over 256 blocks of 32 threads. Differences: `foo`'s
//! `*const [f32; 6]` is a `&[f32; 6]` (the launch maps it; a raw pointer cannot be mapped),
//! and it gains a `&mut f32` that shows the launches ran. Copies: 100 launches of 2 in, 1 out.
//@ run: => h2d=200 d2h=100

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let a = [1.0f32, 1.0, 1.0, 1.0, 1.0, 1.0];
    let mut total = 0.0f32;
    for _ in 0..100 {
        offload::intrinsics::offload::<_, _>(
            kernels::upstream::control_flow_foo,
            [256, 1, 1],
            [32, 1, 1],
            0,
            -1,
            (&a, &mut total),
        )?;
    }
    assert_eq!(total, 600.0);
    println!("ok: control_flow.rs");
    Ok(())
}
