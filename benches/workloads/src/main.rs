//! The kernel workloads of the CUDA-by-hand anchor (reduce, jacobi, sgemm naive and tiled,
//! transpose, histogram) through offload, each timed by the GPU's clock and checked against the
//! CPU. Prints the anchor's lines, for `x.py bench workloads`:
//! `workload NAME ms MEDIAN MIN MAX METRIC VALUE UNIT` and `check NAME ok|FAIL (...)`.
//!
//! `workloads-bench [full|small] [REPS]`: the anchor's sizes (the default), or small ones for
//! the CPU. Each workload preloads its data, times REPS repetitions of its kernels (after 3
//! warm-ups) between two `offload::Event`s, as the anchor times its kernels between two CUDA
//! events, and copies the result back once to check it.
//@ run: small 2 => h2d=29 d2h=16

mod kernels;
mod tensor;

use std::time::Instant;

use offload::{Device, Event, preload, preload_mut};

/// The sizes of one run.
struct Sizes {
    reduce: usize,
    jacobi: (usize, usize, usize),
    sgemm: usize,
    transpose: usize,
    histogram: usize,
    /// The tensor-core products' `n`.
    tensor: usize,
}

const FULL: Sizes = Sizes {
    reduce: 64 << 20,
    jacobi: (4096, 4096, 100),
    sgemm: 4096,
    transpose: 8192,
    histogram: 64 << 20,
    tensor: 4096,
};

const SMALL: Sizes = Sizes {
    reduce: 1 << 16,
    jacobi: (96, 64, 10),
    sgemm: 128,
    transpose: 256,
    histogram: 1 << 16,
    tensor: 256,
};

/// Times `body` (which launches kernels) `reps` times after 3 warm-ups, between two events;
/// prints the figure line, as the anchor's `time_it` does, and returns the median.
pub(crate) fn time_it(
    name: &str,
    reps: usize,
    mut body: impl FnMut() -> Result<(), offload::Error>,
    work: f64,
    unit: &str,
    unit_scale: f64,
) -> Result<f64, offload::Error> {
    for _ in 0..3 {
        body()?;
    }
    offload::synchronize()?;
    let mut ms = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Event::record()?;
        body()?;
        ms.push(Event::record()?.elapsed_ms(&start)?);
    }
    ms.sort_by(f64::total_cmp);
    let median = ms[ms.len() / 2];
    println!(
        "workload {name} ms {median:.4} {:.4} {:.4} METRIC {:.1} {unit}",
        ms[0],
        ms[ms.len() - 1],
        work / (median * 1e-3) / unit_scale
    );
    Ok(median)
}

pub(crate) fn check(name: &str, ok: bool, detail: String) -> bool {
    println!("check {name} {} ({detail})", if ok { "ok" } else { "FAIL" });
    ok
}

/// Blocks of a grid-stride kernel: 8 per multiprocessor on a GPU (the anchor's choice); on the
/// host-offload plugin enough for every core.
fn stride_blocks() -> Result<u32, offload::Error> {
    Ok(Device::default_device()?.multiprocessors().map_or(64, |sms| sms * 8))
}

fn reduce(n: usize, reps: usize) -> Result<bool, offload::Error> {
    let values: Vec<f32> = (0..n).map(|i| ((i * 7) % 13) as f32 * 0.25).collect();
    let expected: f64 = values.iter().map(|&v| f64::from(v)).sum();
    let (blocks, threads) = (stride_blocks()?, 256u32);
    let mut total = 0.0f32;
    {
        let values = preload(&values[..]);
        let mut total = preload_mut(&mut total);
        time_it(
            "reduce",
            reps,
            || {
                offload::launch_async!(kernels::clear_total, 1, 32, (&mut total))?;
                offload::launch_async!(
                    kernels::reduce_sum,
                    blocks,
                    threads,
                    shared = 32 * 4,
                    (&values, &mut total)
                )
            },
            n as f64 * 4.0,
            "GB/s",
            1e9,
        )?;
    }
    let got = f64::from(total);
    Ok(check(
        "reduce",
        (got - expected).abs() <= 1e-4 * expected.abs(),
        format!("{got} vs {expected}"),
    ))
}

/// The grid after `sweeps` Jacobi sweeps of `cells`, on the CPU.
fn jacobi_cpu(w: usize, h: usize, sweeps: usize, cells: &[f32]) -> Vec<f32> {
    let (mut p, mut q) = (cells.to_vec(), vec![0.0f32; cells.len()]);
    for _ in 0..sweeps {
        for y in 0..h {
            for x in 0..w {
                let c = y * w + x;
                q[c] = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                    p[c]
                } else {
                    0.25 * (p[c - w] + p[c + w] + p[c - 1] + p[c + 1])
                };
            }
        }
        std::mem::swap(&mut p, &mut q);
    }
    p
}

fn jacobi((w, h, sweeps): (usize, usize, usize), reps: usize) -> Result<bool, offload::Error> {
    let initial: Vec<f32> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
            if border { ((x + y) % 17) as f32 } else { 0.0 }
        })
        .collect();
    let (grid, block) = ((w.div_ceil(32) as u32, h.div_ceil(8) as u32), (32u32, 8u32));
    let (wu, hu) = (w as u32, h as u32);
    let (mut a, mut b) = (initial.clone(), vec![0.0f32; w * h]);
    let run = |a: &mut Vec<f32>, b: &mut Vec<f32>, reps: Option<usize>| {
        let (mut da, mut db) = (preload_mut(&mut a[..]), preload_mut(&mut b[..]));
        let mut sweep = || {
            for s in 0..sweeps {
                if s % 2 == 0 {
                    offload::launch_async!(
                        kernels::jacobi_step,
                        grid,
                        block,
                        (wu, hu, &da, &mut db)
                    )?;
                } else {
                    offload::launch_async!(
                        kernels::jacobi_step,
                        grid,
                        block,
                        (wu, hu, &db, &mut da)
                    )?;
                }
            }
            Ok(())
        };
        match reps {
            Some(reps) => {
                time_it("jacobi", reps, sweep, (sweeps * w * h) as f64 * 8.0, "GB/s", 1e9).map(drop)
            }
            None => sweep(),
        }
    };
    run(&mut a, &mut b, Some(reps))?;
    // The check: `sweeps` sweeps from the initial grid.
    a.copy_from_slice(&initial);
    run(&mut a, &mut b, None)?;
    let got = if sweeps % 2 == 0 { &a } else { &b };
    let want = jacobi_cpu(w, h, sweeps, &initial);
    let err = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0f32, f32::max);
    Ok(check("jacobi", err <= 1e-4, format!("max error {err:.3e}")))
}

/// 64 sampled elements of `c = a * b` against double precision; returns the largest relative
/// error.
fn sgemm_error(n: usize, a: &[f32], b: &[f32], c: &[f32]) -> f64 {
    (0..64)
        .map(|t| {
            let (r, col) = ((t * 977) % n, (t * 613 + 5) % n);
            let s: f64 = (0..n).map(|k| f64::from(a[r * n + k]) * f64::from(b[k * n + col])).sum();
            (s - f64::from(c[r * n + col])).abs() / s.abs().max(1.0)
        })
        .fold(0.0, f64::max)
}

fn sgemm(n: usize, reps: usize) -> Result<bool, offload::Error> {
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 3) % 11) as f32 / 11.0 - 0.5).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 5) % 7) as f32 / 7.0 - 0.5).collect();
    let flops = 2.0 * (n as f64).powi(3);
    let nu = n as u32;
    let mut ok = true;
    for tiled in [false, true] {
        let name = if tiled { "sgemm_tiled" } else { "sgemm_naive" };
        let mut c = vec![f32::NAN; n * n];
        {
            let (da, db, mut dc) = (preload(&a[..]), preload(&b[..]), preload_mut(&mut c[..]));
            let body = || {
                if tiled {
                    let grid = (nu / 128, nu / 128);
                    let shared = kernels::SGEMM_TILED_SHARED;
                    offload::launch_async!(
                        kernels::sgemm_tiled,
                        grid,
                        256,
                        shared = shared,
                        (nu, &da, &db, &mut dc)
                    )
                } else {
                    let grid = (nu.div_ceil(16), nu.div_ceil(16));
                    offload::launch_async!(
                        kernels::sgemm_naive,
                        grid,
                        (16, 16),
                        (nu, &da, &db, &mut dc)
                    )
                }
            };
            // The naive kernel is slow: 5 repetitions at most, as the anchor times it.
            let reps = if tiled { reps } else { reps.min(5) };
            time_it(name, reps, body, flops, "GFLOP/s", 1e9)?;
        }
        let err = sgemm_error(n, &a, &b, &c);
        ok &= check(name, err <= 1e-3, format!("max relative error {err:.3e}"));
    }
    Ok(ok)
}

fn transpose(n: usize, reps: usize) -> Result<bool, offload::Error> {
    let input: Vec<f32> = (0..n * n).map(|i| (i % 100_003) as f32).collect();
    let mut output = vec![f32::NAN; n * n];
    let nu = n as u32;
    {
        let (din, mut dout) = (preload(&input[..]), preload_mut(&mut output[..]));
        time_it(
            "transpose",
            reps,
            || {
                offload::launch_async!(
                    kernels::transpose,
                    (nu / 32, nu / 32),
                    (32, 8),
                    shared = 32 * 33 * 4,
                    (nu, nu, &din, &mut dout)
                )
            },
            (n * n) as f64 * 8.0,
            "GB/s",
            1e9,
        )?;
    }
    let wrong = (0..n * n).filter(|&i| output[(i % n) * n + i / n] != input[i]).count();
    Ok(check("transpose", wrong == 0, format!("{wrong} wrong")))
}

fn histogram(n: usize, reps: usize) -> Result<bool, offload::Error> {
    let mut seed = 88_172_645_463_325_252u64;
    let values: Vec<u32> = (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u32
        })
        .collect();
    let mut expected = [0u32; 256];
    for &v in &values {
        expected[(v & 255) as usize] += 1;
    }
    let blocks = stride_blocks()?;
    let mut bins = [0u32; 256];
    {
        let (dv, mut db) = (preload(&values[..]), preload_mut(&mut bins[..]));
        time_it(
            "histogram",
            reps,
            || {
                offload::launch_async!(kernels::clear_bins, 1, 256, (&mut db))?;
                offload::launch_async!(
                    kernels::histogram,
                    blocks,
                    256,
                    shared = 256 * 4,
                    (&dv, &mut db)
                )
            },
            n as f64 * 4.0,
            "GB/s",
            1e9,
        )?;
    }
    let wrong = bins.iter().zip(&expected).filter(|(g, w)| g != w).count();
    Ok(check("histogram", wrong == 0, format!("{wrong} bins wrong")))
}

fn main() -> Result<(), offload::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes = match args.first().map(String::as_str) {
        None | Some("full") => FULL,
        Some("small") => SMALL,
        Some(other) => {
            eprintln!("workloads-bench: unknown size `{other}` (full or small)");
            std::process::exit(2);
        }
    };
    let reps = args.get(1).and_then(|r| r.parse().ok()).filter(|&r| r > 0).unwrap_or(20);
    let device = Device::default_device()?;
    println!("device: {}, reps {reps}", device.name());
    let start = Instant::now();
    let mut ok = reduce(sizes.reduce, reps)?;
    ok &= jacobi(sizes.jacobi, reps)?;
    ok &= sgemm(sizes.sgemm, reps)?;
    ok &= transpose(sizes.transpose, reps)?;
    ok &= histogram(sizes.histogram, reps)?;
    ok &= tensor::products(sizes.tensor, reps)?;
    eprintln!("workloads-bench: {:.1} s in all", start.elapsed().as_secs_f64());
    if !ok {
        eprintln!("workloads-bench: a result differs from the CPU's");
        std::process::exit(1);
    }
    Ok(())
}
