//! saxpy over preloaded data: two copies in, K launches without copies, one copy back.
//!
//! `saxpy [N] [K]`
//@ run: 100000 3 => h2d=2 d2h=1
//@ run: 100000 20 => h2d=2 d2h=1

mod kernels;

use std::time::Instant;

use offload::{preload, preload_mut};

fn main() -> Result<(), offload::Error> {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1 << 20);
    let k: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(50);
    let a = 0.5f32;
    let xs: Vec<f32> = (0..n).map(|i| (i & 1023) as f32).collect();
    let mut ys: Vec<f32> = (0..n).map(|i| (i & 7) as f32).collect();
    let threads = 256u32;
    let blocks = n.div_ceil(threads as usize) as u32;
    let start = Instant::now();
    let (copy_in, launches);
    {
        let x = preload(&xs[..]);
        let mut y = preload_mut(&mut ys[..]);
        copy_in = start.elapsed();
        for _ in 0..k {
            offload::launch!(kernels::saxpy, blocks, threads, (a, &x, &mut y))?;
        }
        launches = start.elapsed() - copy_in;
    } // y copied back here
    let total = start.elapsed();
    // Exact: the values are small multiples of 0.5.
    let bad = ys
        .iter()
        .enumerate()
        .filter(|&(i, &y)| y != (i & 7) as f32 + k as f32 * a * (i & 1023) as f32)
        .count();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "saxpy n={n} k={k} on {}: {bad} errors; {:.3} ms in all = copy in {:.3} ms + {k} launches {:.3} ms ({:.1} us each) + copy out {:.3} ms",
        offload::device_name(),
        ms(total),
        ms(copy_in),
        ms(launches),
        ms(launches) * 1e3 / k as f64,
        ms(total - copy_in - launches)
    );
    if bad != 0 {
        std::process::exit(1);
    }
    Ok(())
}
