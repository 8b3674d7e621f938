//! The workloads that run in both precisions, as the anchors have them: reduce, jacobi and the
//! naive matrix product in `f32` (workloads.cu) and in `f64` (workloads_f64.cu, whose figures
//! carry a `64`: `reduce64`, `jacobi64`, `dgemm_naive`). The kernels are generic
//! (`kernels::reduce_sum::<f64>`); each workload takes its launches from its caller, which
//! names the instance.

use offload::{Error, Preload, PreloadMut, preload, preload_mut};

use crate::kernels::Real;
use crate::{check, stride_blocks, time_it};

/// A precision: its floats, the names its figures carry, and how close a result must be.
pub(crate) trait Precision: Real + Into<f64> + PartialEq + std::fmt::Debug {
    /// Appended to the reduce and jacobi figures' names (`reduce64`).
    const SUFFIX: &'static str;
    /// The naive product's figure (`sgemm_naive`, `dgemm_naive`).
    const NAIVE: &'static str;
    /// The largest relative error of a product over 4096 terms that passes (the anchors').
    const PRODUCT_TOLERANCE: f64;
    /// The largest error of a cell after the sweeps that passes.
    const JACOBI_TOLERANCE: f64;
    const NAN: Self;
    /// `x`, rounded as a conversion rounds.
    fn from_f64(x: f64) -> Self;
}

impl Precision for f32 {
    const SUFFIX: &'static str = "";
    const NAIVE: &'static str = "sgemm_naive";
    const PRODUCT_TOLERANCE: f64 = 1e-3;
    const JACOBI_TOLERANCE: f64 = 1e-4;
    const NAN: f32 = f32::NAN;
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

impl Precision for f64 {
    const SUFFIX: &'static str = "64";
    const NAIVE: &'static str = "dgemm_naive";
    const PRODUCT_TOLERANCE: f64 = 1e-12;
    const JACOBI_TOLERANCE: f64 = 1e-12;
    const NAN: f64 = f64::NAN;
    fn from_f64(x: f64) -> f64 {
        x
    }
}

/// Launches a sum: clears the total, then adds the values into it with `blocks` blocks.
pub(crate) type SumLaunch<'a, T> =
    &'a dyn Fn(&Preload<'_, [T]>, &mut PreloadMut<'_, T>, u32) -> Result<(), Error>;
/// Launches a Jacobi sweep: width, height, source, destination.
pub(crate) type SweepLaunch<'a, T> =
    &'a dyn Fn(u32, u32, &PreloadMut<'_, [T]>, &mut PreloadMut<'_, [T]>) -> Result<(), Error>;
/// Launches a product `c = a * b` of `n x n` matrices.
pub(crate) type ProductLaunch<'a, T> = &'a dyn Fn(
    u32,
    &Preload<'_, [T]>,
    &Preload<'_, [T]>,
    &mut PreloadMut<'_, [T]>,
) -> Result<(), Error>;

/// The sum of `n` values, all multiples of 1/4 below 4: exact in either precision, so the
/// check is for equality in `f64` (within 1e-4 relative in `f32`, whose total rounds).
pub(crate) fn reduce<T: Precision>(
    n: usize,
    reps: usize,
    launch: SumLaunch<'_, T>,
) -> Result<bool, Error> {
    let values: Vec<T> = (0..n).map(|i| T::from_f64(((i * 7) % 13) as f64 * 0.25)).collect();
    let expected: f64 = values.iter().map(|&v| v.into()).sum();
    let blocks = stride_blocks()?;
    let mut total = T::default();
    let name = format!("reduce{}", T::SUFFIX);
    {
        let values = preload(&values[..]);
        let mut total = preload_mut(&mut total);
        let bytes = n as f64 * size_of::<T>() as f64;
        time_it(&name, reps, || launch(&values, &mut total, blocks), bytes, "GB/s", 1e9)?;
    }
    let got: f64 = total.into();
    let tolerance = if T::SUFFIX.is_empty() { 1e-4 * expected.abs() } else { 0.0 };
    Ok(check(&name, (got - expected).abs() <= tolerance, format!("{got} vs {expected}")))
}

/// The grid after `sweeps` Jacobi sweeps of `cells`, on the CPU.
fn jacobi_cpu<T: Precision>(w: usize, h: usize, sweeps: usize, cells: &[T]) -> Vec<T> {
    let (mut p, mut q) = (cells.to_vec(), vec![T::default(); cells.len()]);
    for _ in 0..sweeps {
        for y in 0..h {
            for x in 0..w {
                let c = y * w + x;
                q[c] = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                    p[c]
                } else {
                    T::QUARTER * (p[c - w] + p[c + w] + p[c - 1] + p[c + 1])
                };
            }
        }
        std::mem::swap(&mut p, &mut q);
    }
    p
}

pub(crate) fn jacobi<T: Precision>(
    (w, h, sweeps): (usize, usize, usize),
    reps: usize,
    launch: SweepLaunch<'_, T>,
) -> Result<bool, Error> {
    let initial: Vec<T> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
            T::from_f64(if border { ((x + y) % 17) as f64 } else { 0.0 })
        })
        .collect();
    let (wu, hu) = (w as u32, h as u32);
    let name = format!("jacobi{}", T::SUFFIX);
    let (mut a, mut b) = (initial.clone(), vec![T::default(); w * h]);
    let run = |a: &mut Vec<T>, b: &mut Vec<T>, reps: Option<usize>| {
        let (mut da, mut db) = (preload_mut(&mut a[..]), preload_mut(&mut b[..]));
        let mut sweep = || {
            for s in 0..sweeps {
                if s % 2 == 0 {
                    launch(wu, hu, &da, &mut db)?;
                } else {
                    launch(wu, hu, &db, &mut da)?;
                }
            }
            Ok(())
        };
        let bytes = (sweeps * w * h) as f64 * 2.0 * size_of::<T>() as f64;
        match reps {
            Some(reps) => time_it(&name, reps, sweep, bytes, "GB/s", 1e9).map(drop),
            None => sweep(),
        }
    };
    run(&mut a, &mut b, Some(reps))?;
    // The check: `sweeps` sweeps from the initial grid.
    a.copy_from_slice(&initial);
    run(&mut a, &mut b, None)?;
    let got = if sweeps % 2 == 0 { &a } else { &b };
    let want = jacobi_cpu(w, h, sweeps, &initial);
    let err =
        got.iter().zip(&want).map(|(&g, &w)| (g.into() - w.into()).abs()).fold(0.0f64, f64::max);
    Ok(check(&name, err <= T::JACOBI_TOLERANCE, format!("max error {err:.3e}")))
}

/// The inputs of the matrix products (as the anchors make them): `a[i] = (3i mod 11) / 11 - 1/2`,
/// `b[i] = (5i mod 7) / 7 - 1/2`.
pub(crate) fn product_inputs<T: Precision>(n: usize) -> (Vec<T>, Vec<T>) {
    let a = (0..n * n).map(|i| T::from_f64(((i * 3) % 11) as f64 / 11.0 - 0.5)).collect();
    let b = (0..n * n).map(|i| T::from_f64(((i * 5) % 7) as f64 / 7.0 - 0.5)).collect();
    (a, b)
}

/// 64 sampled elements of `c = a * b` against double precision; the largest relative error.
pub(crate) fn product_error<T: Precision, C: Copy + Into<f64>>(
    n: usize,
    a: &[T],
    b: &[T],
    c: &[C],
) -> f64 {
    (0..64)
        .map(|t| {
            let (r, col) = ((t * 977) % n, (t * 613 + 5) % n);
            let s: f64 = (0..n).map(|k| a[r * n + k].into() * b[k * n + col].into()).sum();
            (s - c[r * n + col].into()).abs() / s.abs().max(1.0)
        })
        .fold(0.0, f64::max)
}

/// Times `launch` over `n x n` matrices and checks its product.
pub(crate) fn product<T: Precision>(
    name: &str,
    n: usize,
    reps: usize,
    launch: ProductLaunch<'_, T>,
) -> Result<bool, Error> {
    let (a, b) = product_inputs::<T>(n);
    let mut c = vec![T::NAN; n * n];
    {
        let (da, db, mut dc) = (preload(&a[..]), preload(&b[..]), preload_mut(&mut c[..]));
        let flops = 2.0 * (n as f64).powi(3);
        let nu = n as u32;
        time_it(name, reps, || launch(nu, &da, &db, &mut dc), flops, "GFLOP/s", 1e9)?;
    }
    let err = product_error(n, &a, &b, &c);
    Ok(check(name, err <= T::PRODUCT_TOLERANCE, format!("max relative error {err:.3e}")))
}
