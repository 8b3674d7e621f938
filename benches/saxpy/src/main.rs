//! The saxpy workload of the CUDA-by-hand and clang OpenMP reference benchmarks through offload,
//! printing one `bench <memory> <metric> <value>` line per figure for `x.py bench`.
//!
//! `saxpy-bench N K LAUNCHES PAIRS`
//!
//! Copies: per memory kind 2 in and 1 out preloaded, the same again for the asynchronous
//! launches, 2K in and K out automatic; then 1 in for the data the preload pairs find present,
//! and 1 in per pair (a `Preload` of present data copies its bytes in again).
//@ run: 4096 3 10 10 => h2d=31 d2h=10

mod kernels;

use std::ops::DerefMut;
use std::time::Instant;

use offload::{HostBuffer, preload, preload_mut};

const A: f32 = 0.5;

/// Elements of the data each preload pair preloads.
const PAIR_ELEMENTS: usize = 4096;

/// Threads per block: `SAXPY_BENCH_THREADS`, else 256 (the reference benchmarks' choice).
fn threads() -> u32 {
    std::env::var("SAXPY_BENCH_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(256)
}

fn init(x: &mut [f32], y: &mut [f32]) {
    for (i, (x, y)) in x.iter_mut().zip(y.iter_mut()).enumerate() {
        *x = (i & 1023) as f32;
        *y = (i & 7) as f32;
    }
}

/// Elements that differ from K applications of saxpy (exact: small multiples of 0.5).
fn errors(y: &[f32], k: usize) -> usize {
    y.iter()
        .enumerate()
        .filter(|&(i, &y)| y != (i & 7) as f32 + k as f32 * A * (i & 1023) as f32)
        .count()
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Preloaded then automatic saxpy over `x`, `y` (pageable or pinned); returns the errors.
fn saxpy_figures<B: DerefMut<Target = [f32]>>(
    memory: &str,
    x: &mut B,
    y: &mut B,
    k: usize,
) -> Result<usize, offload::Error> {
    let n = x.len();
    let threads = threads();
    let blocks = n.div_ceil(threads as usize) as u32;
    init(x, y);
    // The clock stops once the `PreloadMut`'s drop has copied `y` back, as CUDA by hand's stops
    // after its copy out; the release of `x` (a free, no copy) is timed apart, as CUDA by
    // hand's frees are left out of its total.
    let t0 = Instant::now();
    let dx = preload(&x[..]);
    let mut dy = preload_mut(&mut y[..]);
    let map_in = ms(t0);
    let t1 = Instant::now();
    for _ in 0..k {
        offload::launch!(kernels::saxpy, blocks, threads, (A, &dx, &mut dy))?;
    }
    let kernels = ms(t1);
    let t2 = Instant::now();
    drop(dy);
    let map_out = ms(t2);
    let total = ms(t0);
    let t3 = Instant::now();
    drop(dx);
    let release = ms(t3);
    let mut bad = errors(y, k);
    println!("bench {memory} preloaded_total_ms {total:.3}");
    println!("bench {memory} map_in_ms {map_in:.3}");
    println!("bench {memory} kernels_ms {kernels:.3}");
    println!("bench {memory} map_out_ms {map_out:.3}");
    println!("bench {memory} release_ms {release:.3}");

    // The same with K asynchronous launches (`launch_async!`): the kernels back to back, one
    // wait; the total again from the first preload to the copy back.
    init(x, y);
    let t0 = Instant::now();
    let dx = preload(&x[..]);
    let mut dy = preload_mut(&mut y[..]);
    let t1 = Instant::now();
    for _ in 0..k {
        offload::launch_async!(kernels::saxpy, blocks, threads, (A, &dx, &mut dy))?;
    }
    offload::synchronize()?;
    let kernels_async = ms(t1);
    drop(dy);
    let total_async = ms(t0);
    drop(dx);
    bad += errors(y, k);
    println!("bench {memory} kernels_async_ms {kernels_async:.3}");
    println!("bench {memory} preloaded_total_async_ms {total_async:.3}");

    init(x, y);
    let t0 = Instant::now();
    for _ in 0..k {
        offload::launch!(kernels::saxpy, blocks, threads, (A, &x[..], &mut y[..]))?;
    }
    println!("bench {memory} automatic_total_ms {:.3}", ms(t0));
    bad += errors(y, k);
    Ok(bad)
}

fn main() -> Result<(), offload::Error> {
    let arg = |i: usize, default: usize| {
        std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
    };
    let (n, k, launches, pairs) = (arg(1, 64 << 20), arg(2, 50), arg(3, 1000), arg(4, 10000));
    println!("bench device {}", offload::device_name());
    println!("bench config n={n} k={k} launches={launches} pairs={pairs}");

    // Device start-up and image load, outside every figure.
    offload::launch!(kernels::empty, 1, 32, ())?;

    let mut x = vec![0.0f32; n];
    let mut y = vec![0.0f32; n];
    let mut bad = saxpy_figures("pageable", &mut x, &mut y, k)?;
    drop((x, y));
    let mut x = HostBuffer::new(n, 0.0f32)?;
    let mut y = HostBuffer::new(n, 0.0f32)?;
    bad += saxpy_figures("pinned", &mut x, &mut y, k)?;

    let t0 = Instant::now();
    for _ in 0..launches {
        offload::launch!(kernels::empty, 1, 32, ())?;
    }
    println!("bench any empty_launch_us {:.3}", ms(t0) * 1e3 / launches as f64);

    // Launch throughput: the same launches queued with launch_async!, then one wait (as CUDA
    // by hand's back-to-back launches; synchronous on the host-offload plugin).
    let t0 = Instant::now();
    for _ in 0..launches {
        offload::launch_async!(kernels::empty, 1, 32, ())?;
    }
    offload::synchronize()?;
    println!("bench any empty_launch_async_us {:.3}", ms(t0) * 1e3 / launches as f64);

    // A preload of data already preloaded, and its drop: what clang's `enter data`/`exit data`
    // pair on present data does. The runtime is not asked for a mapping, but the library copies
    // the bytes in again (clang's pair copies nothing, and reads stale data after a change), so
    // the pairs take the first `PAIR_ELEMENTS` of the data: 16 KiB, whatever N.
    let held = preload(&x[..]);
    let part = &x[..n.min(PAIR_ELEMENTS)];
    let t0 = Instant::now();
    for _ in 0..pairs {
        drop(preload(part));
    }
    println!("bench any preload_pair_us {:.3}", ms(t0) * 1e3 / pairs as f64);
    drop(held);

    println!("bench result {}", if bad == 0 { "PASS" } else { "FAIL" });
    if bad != 0 {
        eprintln!("saxpy-bench: {bad} wrong elements");
        std::process::exit(1);
    }
    Ok(())
}
