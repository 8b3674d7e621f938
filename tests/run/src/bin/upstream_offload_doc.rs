//! Follows the example of `core::offload`'s documentation (library/core/src/offload/mod.rs of
//! rust-lang/rust): a kernel reading `core::arch::nvptx`'s thread indices (here
//! `offload::arch::nvptx`'s, on every device image), launched by `core::offload::offload!`
//! (here `offload::offload!`). Difference: the kernel's `*mut [f64; 256]` is a
//! `&mut [f64; 256]`, which needs no `unsafe` to write. Copies: 1 in, 1 out.
//@ run: => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use kernels::upstream::doc_kernel as kernel;

fn main() -> Result<(), offload::Error> {
    let mut x = [0.0f64; 256];
    offload::offload! {
        kernel = kernel,
        workgroup_dim = [256, 1, 1],
        args = (&mut x,),
    }?;
    assert!(x.iter().enumerate().all(|(i, &v)| v == i as f64));
    println!("ok: core::offload's example");
    Ok(())
}
