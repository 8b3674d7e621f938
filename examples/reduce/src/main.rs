//! A sum over preloaded data: the values copied in once, each block summing its part by warp
//! shuffles and shared memory and adding it atomically into the total; checked against the
//! CPU's sum (exact: the values are multiples of 0.25).
//!
//! `reduce [N] [BLOCKS]`
//@ run: 100000 => h2d=2 d2h=1
//@ run: 1000003 16 => h2d=2 d2h=1

mod kernels;

use std::time::Instant;

use offload::preload;

fn main() -> Result<(), offload::Error> {
    let arg = |i: usize, default: usize| {
        std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
    };
    // On a GPU two blocks per multiprocessor of an H200; in the host-offload image (a device
    // without memory of its own) 64, enough for the blocks to run on all the machine's cores.
    let on_gpu = offload::Device::default_device()?.memory().is_some();
    let (n, blocks) = (arg(1, 1 << 24), arg(2, if on_gpu { 264 } else { 64 }) as u32);
    let values: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 * 0.25).collect();
    let threads = 256u32;
    let start = Instant::now();
    let mut total = 0.0f64;
    {
        let values = preload(&values[..]);
        offload::launch!(
            kernels::sum,
            blocks,
            threads,
            shared = threads / 32 * 8,
            (&values, &mut total)
        )?;
    }
    let elapsed = start.elapsed();
    let expected: f64 = values.iter().sum();
    println!(
        "reduce n={n} in {blocks} blocks of {threads} on {}: sum {total} (CPU {expected}), {:.3} ms",
        offload::device_name(),
        elapsed.as_secs_f64() * 1e3
    );
    if total != expected {
        eprintln!("reduce: the sum differs from the CPU's");
        std::process::exit(1);
    }
    Ok(())
}
