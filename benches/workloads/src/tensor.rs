//! The tensor-core workloads: `c = a * b` for `n x n` row-major matrices on `mma.sync`, in bf16
//! and f16 (f32 accumulation), TF32 and f64, each checked on sampled elements against double
//! precision over the inputs as the kernel sees them, as `matrix.cu` checks its products.
//! Printed as `workload NAME ...` lines in TFLOP/s: `bf16_wmma_tiles` (the anchor's WMMA
//! algorithm), `bf16_gemm_docs` (docs/KERNELS.md's), and for each kind every tiling tried
//! (`bf16_gemm_128x128x64s3w4`: block tile, stages and warps; `bf16_gemm_wgmma_128x256x64s4g2`
//! on `wgmma`: block tile, stages and warpgroups) and the best of them
//! (`bf16_gemm`, `f16_gemm`, `tf32_gemm`, `sgemm_tf32x3`: f32 at f32's accuracy in three TF32
//! products, `dgemm`). `offload-blas`'s GEMM on the same guards
//! (`bf16_gemm_blas`, `sgemm_blas`, `dgemm_blas`: cuBLAS on the library's stream) measures what
//! the wrapper costs against cuBLAS called directly.

use offload::gpu::mma::{Kind, Tf32, Tf32x3};
use offload::{Preload, PreloadMut, bf16, f16, preload, preload_mut};

use crate::kernels::tensor as k;
use crate::real::{Precision, product_error, product_inputs};
use crate::{check, time_it};

/// One kind's operands on the device and what the kernels see of them.
struct Operands<'a, T: offload::DeviceCopy> {
    a: Preload<'a, [T]>,
    b: Preload<'a, [T]>,
    seen: (Vec<f64>, Vec<f64>),
}

/// A launch of one tiling on `c`, of the accumulator's type `A`.
type Launch<T, A = f32> =
    Box<dyn Fn(&Operands<'_, T>, &mut PreloadMut<'_, [A]>) -> Result<(), offload::Error>>;

/// Times each `(name, launch)` on the operands, checks it, prints each and the best of them
/// as `best` (when there are several); returns whether all were right.
fn measure<T: offload::DeviceCopy, A: Precision>(
    n: usize,
    reps: usize,
    ops: &Operands<'_, T>,
    tilings: &[(String, Launch<T, A>)],
    best: Option<&str>,
    tolerance: f64,
) -> Result<bool, offload::Error> {
    let flops = 2.0 * (n as f64).powi(3);
    let mut ok = true;
    let mut fastest: Option<(f64, &str)> = None;
    for (name, launch) in tilings {
        let mut c = vec![A::NAN; n * n];
        let median = {
            let mut dc = preload_mut(&mut c[..]);
            time_it(name, reps, || launch(ops, &mut dc), flops, "TFLOP/s", 1e12)?
        };
        let err = product_error(n, &ops.seen.0, &ops.seen.1, &c);
        ok &= check(name, err <= tolerance, format!("max relative error {err:.3e}"));
        if fastest.is_none_or(|(ms, _)| median < ms) {
            fastest = Some((median, name));
        }
    }
    if let (Some(best), Some((ms, name))) = (best, fastest) {
        println!(
            "workload {best} ms {ms:.4} {ms:.4} {ms:.4} METRIC {:.1} TFLOP/s (the best: {name})",
            flops / (ms * 1e-3) / 1e12
        );
    }
    Ok(ok)
}

/// A `gemm` instance's launch over `n x n` matrices, and its name: the kind, the block tile
/// (rows x columns x depth), the stages and the warps (`bf16_gemm_128x128x64s3w4`).
macro_rules! gemm {
    ($kind:ty, $name:literal, $n:expr, ($chunk:literal, $wm:literal, $wn:literal, $fm:literal, $fn_:literal, $bk:literal, $s:literal)) => {
        gemm!($kind, $name, $n, ($chunk, $wm, $wn, $fm, $fn_, $bk, $s, 0, true))
    };
    ($kind:ty, $name:literal, $n:expr, ($chunk:literal, $wm:literal, $wn:literal, $fm:literal, $fn_:literal, $bk:literal, $s:literal, $g:literal, $p:literal)) => {{
        let nu = $n as u32;
        let (bm, bn) = (16 * $fm * $wm, 8 * $fn_ * $wn);
        let size = size_of::<<$kind as Kind>::Elem>();
        let shared = k::gemm_shared(bm, bn, $bk, $s, size);
        let launch: Launch<<$kind as Kind>::Elem, <$kind as Kind>::Acc> =
            Box::new(move |ops, c| {
                offload::launch_async!(
                    k::gemm::<$kind, $chunk, $wm, $wn, $fm, $fn_, $bk, $s, $g, $p>,
                    (nu / bn as u32, nu / bm as u32),
                    32 * $wm * $wn,
                    shared = shared,
                    (nu, &ops.a, &ops.b, c)
                )
            });
        // Launch order unless grouped (`g8`: 8 rows of tiles a group), fragments loaded a step
        // ahead unless `np`.
        let group = if $g > 0 { format!("g{}", $g) } else { String::new() };
        let name = format!(
            "{}_gemm_{bm}x{bn}x{}s{}w{}{group}{}",
            $name,
            $bk,
            $s,
            $wm * $wn,
            if $p { "" } else { "np" }
        );
        (name, launch)
    }};
}

/// A `gemm_wgmma` instance's launch over `n x n` matrices, and its name: the kind, the block
/// tile (rows x columns x depth), the stages and the warpgroups
/// (`bf16_gemm_wgmma_128x128x64s3g2`).
macro_rules! gemm_wgmma {
    ($kind:ty, $name:literal, $n:expr, ($groups:literal, $c:literal, $bk:literal, $s:literal)) => {{
        let nu = $n as u32;
        let (bm, bn) = (64 * $groups, 8 * $c);
        let shared = k::wgmma_shared(bm, bn, $bk, $s);
        let launch: Launch<$kind> = Box::new(move |ops, c| {
            offload::launch_async!(
                k::gemm_wgmma::<$kind, $groups, $c, $bk, $s>,
                (nu / bn as u32, nu / bm as u32),
                128 * $groups,
                shared = shared,
                (nu, &ops.a, &ops.b, c)
            )
        });
        (format!("{}_gemm_wgmma_{bm}x{bn}x{}s{}g{}", $name, $bk, $s, $groups), launch)
    }};
}

/// `offload-blas`'s `c = a * b` over `n x n` guards, named `name`; `one` and `zero` are 1 and 0
/// of the accumulator.
fn blas<T: offload_blas::Element>(
    name: &str,
    n: usize,
    (one, zero): (T::Acc, T::Acc),
) -> (String, Launch<T, T::Acc>) {
    use offload_blas::{Matrix, MatrixMut};
    let launch: Launch<T, T::Acc> = Box::new(move |ops, c| {
        let (a, b) = (Matrix::new(&ops.a, n, n), Matrix::new(&ops.b, n, n));
        offload_blas::gemm(one, a, b, zero, MatrixMut::new(c, n, n))
    });
    (name.to_owned(), launch)
}

/// Preloads `a` and `b` converted by `convert`, keeping what the kernels see of them.
fn operands<'a, T: offload::DeviceCopy + Copy>(
    a: &'a [T],
    b: &'a [T],
    seen: impl Fn(T) -> f64,
) -> Operands<'a, T> {
    let seen = (a.iter().map(|&x| seen(x)).collect(), b.iter().map(|&x| seen(x)).collect());
    Operands { a: preload(a), b: preload(b), seen }
}

/// The tensor-core workloads at `n` (a multiple of 256), each timed `reps` times.
pub(crate) fn products(n: usize, reps: usize) -> Result<bool, offload::Error> {
    let (a, b) = product_inputs::<f32>(n);
    let nu = n as u32;
    let mut ok = true;

    let (a16, b16): (Vec<bf16>, Vec<bf16>) = (
        a.iter().map(|&x| bf16::from_f32(x)).collect(),
        b.iter().map(|&x| bf16::from_f32(x)).collect(),
    );
    let ops = operands(&a16, &b16, bf16::to_f64);
    let wmma: Launch<bf16> = Box::new(move |ops, c| {
        offload::launch_async!(
            k::bf16_wmma_tiles,
            (nu / 128, nu / 128),
            256,
            shared = k::BF16_WMMA_SHARED,
            (nu, &ops.a, &ops.b, c)
        )
    });
    let simple: Launch<bf16> = Box::new(move |ops, c| {
        offload::launch_async!(
            k::bf16_gemm,
            (nu / 128, nu / 128),
            128,
            shared = k::BF16_GEMM_SHARED,
            (nu, &ops.a, &ops.b, c)
        )
    });
    let tilings = [("bf16_wmma_tiles".to_owned(), wmma), ("bf16_gemm_docs".to_owned(), simple)];
    ok &= measure(n, reps, &ops, &tilings, None, 1e-3)?;
    let tilings = [
        gemm!(bf16, "bf16", n, (8, 2, 2, 4, 8, 64, 3)),
        gemm!(bf16, "bf16", n, (8, 2, 4, 4, 8, 64, 3)),
        gemm_wgmma!(bf16, "bf16", n, (2, 16, 64, 3)),
        gemm_wgmma!(bf16, "bf16", n, (2, 32, 64, 3)),
    ];
    ok &= measure(n, reps, &ops, &tilings, Some("bf16_gemm"), 1e-3)?;
    let tilings = [blas::<bf16>("bf16_gemm_blas", n, (1.0, 0.0))];
    ok &= measure(n, reps, &ops, &tilings, None, 1e-3)?;
    drop(ops);

    let (a16, b16): (Vec<f16>, Vec<f16>) = (
        a.iter().map(|&x| f16::from_f32(x)).collect(),
        b.iter().map(|&x| f16::from_f32(x)).collect(),
    );
    let ops = operands(&a16, &b16, f16::to_f64);
    let tilings =
        [gemm!(f16, "f16", n, (8, 2, 2, 4, 8, 64, 3)), gemm_wgmma!(f16, "f16", n, (2, 16, 64, 3))];
    ok &= measure(n, reps, &ops, &tilings, Some("f16_gemm"), 1e-3)?;
    drop(ops);

    // TF32: the kernels round each input to nearest, ties away, as `cvt.rna.tf32.f32` does.
    let tf32 = |x: f32| f64::from(f32::from_bits(x.to_bits().wrapping_add(0x1000) & !0x1fff));
    let ops = operands(&a, &b, tf32);
    let tilings = [
        gemm!(Tf32, "tf32", n, (4, 2, 2, 4, 8, 32, 3)),
        gemm!(Tf32, "tf32", n, (4, 2, 4, 4, 8, 32, 3)),
        gemm!(Tf32, "tf32", n, (4, 2, 2, 4, 8, 32, 3, 8, false)),
    ];
    ok &= measure(n, reps, &ops, &tilings, Some("tf32_gemm"), 1e-2)?;
    drop(ops);
    // 3xTF32 and offload-blas's SGEMM: f32 products, checked against the f32 inputs as they
    // are, as cuBLAS's SGEMM is.
    let ops = operands(&a, &b, f64::from);
    let tilings = [
        gemm!(Tf32x3, "tf32x3", n, (4, 2, 4, 4, 4, 32, 3)),
        gemm!(Tf32x3, "tf32x3", n, (4, 2, 4, 4, 4, 32, 3, 8, false)),
        gemm!(Tf32x3, "tf32x3", n, (4, 2, 2, 4, 4, 32, 3)),
        gemm!(Tf32x3, "tf32x3", n, (4, 2, 2, 4, 8, 32, 3)),
    ];
    ok &= measure(n, reps, &ops, &tilings, Some("sgemm_tf32x3"), 1e-4)?;
    let tilings = [blas::<f32>("sgemm_blas", n, (1.0, 0.0))];
    ok &= measure(n, reps, &ops, &tilings, None, 1e-4)?;
    drop(ops);

    // f64 on the FP64 tensor cores: the products' terms exact, each step a fused
    // multiply-add.
    let (a, b) = product_inputs::<f64>(n);
    let ops = operands(&a, &b, |x| x);
    let tilings = [
        gemm!(f64, "f64", n, (2, 2, 4, 2, 4, 32, 3)),
        gemm!(f64, "f64", n, (2, 2, 4, 2, 2, 32, 3)),
        gemm!(f64, "f64", n, (2, 2, 4, 2, 2, 32, 3, 16, true)),
        gemm!(f64, "f64", n, (2, 2, 2, 2, 4, 16, 3, 8, false)),
        gemm!(f64, "f64", n, (2, 4, 2, 2, 4, 16, 3, 8, false)),
        gemm!(f64, "f64", n, (2, 4, 2, 2, 4, 16, 3, 16, false)),
        gemm!(f64, "f64", n, (2, 4, 2, 2, 4, 32, 2, 8, false)),
    ];
    ok &= measure(n, reps, &ops, &tilings, Some("dgemm"), 1e-12)?;
    let tilings = [blas::<f64>("dgemm_blas", n, (1.0, 0.0))];
    ok &= measure(n, reps, &ops, &tilings, None, 1e-12)?;
    Ok(ok)
}
