//! Follows rust-lang/rust's tests/codegen-llvm/gpu_offload/region_host.rs: a `Region` built
//! from an array's slice, launched by `offload!` with its defaults (one block of one thread),
//! imported from `offload` for `core::offload`. Difference: the strategy is this
//! crate's `Linear1D` for the test's `Dummy`. Copies: 1 in, 1 out.
//@ run: => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use kernels::upstream::region_foo as foo;
use offload::Region;
use offload::region::Linear1D;

fn main() -> Result<(), offload::Error> {
    let mut x = [0.0f32; 4];
    offload::offload! {
        kernel = foo,
        args = (Region::<f32, Linear1D>::new(&mut x as &mut [f32]),),
    }?;
    assert_eq!(x, [1.0, 0.0, 0.0, 0.0]);
    println!("ok: region_host.rs");
    Ok(())
}
