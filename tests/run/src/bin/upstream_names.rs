//! A program written with upstream's names only: a kernel marked `#[offload::offload_kernel]`,
//! launched by `offload::offload!` with its named fields in any order and their defaults
//! (`thread_dim` and `dyn_cache` left out here and there, `device` given as an index), over
//! plain references (mapped around the launch), preloaded guards (no copies) and a generic
//! kernel's instance. Copies: 2 in and 1 out per plain launch, twice; preloaded 2 in, 1 out.
//@ run: 1000 => h2d=6 d2h=3

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::offload;

fn main() -> Result<(), offload::Error> {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let blocks = n.div_ceil(128) as u32;
    let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let mut ys = vec![0.0f32; n];

    offload! {
        kernel = kernels::square,
        workgroup_dim = [blocks, 1, 1],
        thread_dim = [128, 1, 1],
        args = (&xs[..], &mut ys[..]),
    }?;
    assert!(ys.iter().zip(&xs).all(|(&y, &x)| y == x * x), "square");

    // Fields in another order, the device by index, shared memory given (none used).
    offload!(
        args = (2.0f32, &xs[..], &mut ys[..]),
        device = 0,
        dyn_cache = 0,
        thread_dim = [128, 1, 1],
        workgroup_dim = [blocks, 1, 1],
        kernel = kernels::axpy::<f32>
    )?;
    assert!(ys.iter().zip(&xs).all(|(&y, &x)| y == 2.0 * x + x * x), "axpy");

    // Over guards: the data stays on the device between the two launches.
    let mut zs = vec![1.0f32; n];
    {
        let x = offload::preload(&xs[..]);
        let mut z = offload::preload_mut(&mut zs[..]);
        for _ in 0..2 {
            offload!(
                kernel = kernels::axpy::<f32>,
                workgroup_dim = [blocks, 1, 1],
                thread_dim = [128, 1, 1],
                args = (1.0f32, &x, &mut z)
            )?;
        }
    }
    assert!(zs.iter().zip(&xs).all(|(&z, &x)| z == (1.0 + x) + x), "preloaded");
    println!("ok: offload! with upstream's fields");
    Ok(())
}
