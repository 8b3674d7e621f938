//! The kernel workloads of the CUDA-by-hand anchor (reduce, jacobi, sgemm naive and tiled,
//! transpose, histogram) through offload, each timed by the GPU's clock and checked against the
//! CPU. Prints the anchor's lines, for `x.py bench workloads`:
//! `workload NAME ms MEDIAN MIN MAX METRIC VALUE UNIT` and `check NAME ok|FAIL (...)`.
//!
//! `workloads-bench [full|small] [REPS]`: the anchor's sizes (the default), or small ones for
//! the CPU. Each workload preloads its data, times REPS repetitions of its kernels (after 3
//! warm-ups) between two `offload::Event`s, as the anchor times its kernels between two CUDA
//! events, and copies the result back once to check it.
//@ run: small 2 => h2d=60 d2h=40

mod kernels;
mod real;
mod tensor;

use std::time::Instant;

use offload::{Device, Event, preload, preload_mut};
use real::{ProductLaunch, SumLaunch, SweepLaunch};

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
pub(crate) fn stride_blocks() -> Result<u32, offload::Error> {
    Ok(Device::default_device()?.multiprocessors().map_or(64, |sms| sms * 8))
}

/// The tiled SGEMM (`kernels::sgemm_tiled`), the anchor's 128x128x8 blocking.
fn sgemm_tiled(n: usize, reps: usize) -> Result<bool, offload::Error> {
    let launch: real::ProductLaunch<'_, f32> = &|nu, a, b, c| {
        offload::launch_async!(
            kernels::sgemm_tiled,
            (nu / 128, nu / 128),
            256,
            shared = kernels::SGEMM_TILED_SHARED,
            (nu, a, b, c)
        )
    };
    real::product::<f32>("sgemm_tiled", n, reps, launch)
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
                db.write_bytes(0);
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
    let mut ok = true;
    macro_rules! in_precision {
        ($t:ty, $bytes:literal) => {
            let sum: SumLaunch<'_, $t> = &|values, total, blocks| {
                total.write_bytes(0);
                offload::launch_async!(
                    kernels::reduce_sum::<$t>,
                    blocks,
                    256,
                    shared = 32 * $bytes,
                    (values, total)
                )
            };
            ok &= real::reduce::<$t>(sizes.reduce, reps, sum)?;
            let (blocks, threads) = ((32u32, 8u32), (32, 8));
            let sweep: SweepLaunch<'_, $t> = &|w, h, src, dst| {
                let grid = (w.div_ceil(blocks.0), h.div_ceil(blocks.1));
                offload::launch_async!(kernels::jacobi_step::<$t>, grid, threads, (w, h, src, dst))
            };
            ok &= real::jacobi::<$t>(sizes.jacobi, reps, sweep)?;
            let naive: ProductLaunch<'_, $t> = &|n, a, b, c| {
                let grid = (n.div_ceil(16), n.div_ceil(16));
                offload::launch_async!(kernels::gemm_naive::<$t>, grid, (16, 16), (n, a, b, c))
            };
            ok &= real::product::<$t>(
                <$t as real::Precision>::NAIVE,
                sizes.sgemm,
                reps.min(5),
                naive,
            )?;
        };
    }
    in_precision!(f32, 4);
    ok &= sgemm_tiled(sizes.sgemm, reps)?;
    ok &= transpose(sizes.transpose, reps)?;
    ok &= histogram(sizes.histogram, reps)?;
    in_precision!(f64, 8);
    ok &= tensor::products(sizes.tensor, reps)?;
    eprintln!("workloads-bench: {:.1} s in all", start.elapsed().as_secs_f64());
    if !ok {
        eprintln!("workloads-bench: a result differs from the CPU's");
        std::process::exit(1);
    }
    Ok(())
}
