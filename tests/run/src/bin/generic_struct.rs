//! Instantiations of a generic `#[derive(DeviceCopy)]` struct that have no padding go to a
//! kernel by value, preloaded as a slice, and nested, by reference (padded ones do not compile:
//! tests/ui/device_copy_generic_padding.rs): one copy in for each of `xs`, `n` and `ys`, one out
//! for `ys`.
//@ run: 1 => h2d=3 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use kernels::Pair;

fn main() -> Result<(), offload::Error> {
    let xs: Vec<Pair<u32, f32>> = (0..300).map(|i| Pair { a: i, b: 0.5 }).collect();
    let nested = Pair { a: Pair { a: 1u32, b: 0.25f32 }, b: 2u64 };
    let mut ys = vec![0.0f32; 300];
    {
        let x = offload::preload(&xs[..]);
        let mut y = offload::preload_mut(&mut ys[..]);
        let p = Pair { a: 2.0f32, b: 1.0f32 };
        offload::launch!(kernels::pairs, 3, 128, (p, &x, &nested, &mut y))?;
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 2.0 * (i as f32 + 0.5) + 1.0 + 3.25, "y[{i}]");
    }
    println!("ok");
    Ok(())
}
