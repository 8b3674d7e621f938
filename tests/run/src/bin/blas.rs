//! `offload-blas` on preloaded data, in order with `launch_async!` kernels on the same guards:
//! GEMM (plain, from A's and B's transposes, a tile inside a wider matrix, into a tile of a
//! wider result), GEMV (plain and transposed), AXPY,
//! DOT and NRM2 in f32 and f64, and GEMM of bf16 and f16 into f32, each against the CPU in f64.
//! On a GPU the routines are cuBLAS's on the library's stream; on the host-offload plugin the
//! CPU's. Operands the routines refuse leave the data as it was. The routines copy nothing:
//! the copies are the preloads' (13 in, 6 back, per real type; 4 in, 1 back, per 16-bit type).
//@ run: => h2d=34 d2h=14

#[path = "../inputs.rs"]
mod inputs;
#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use inputs::values;
use offload::{Error, bf16, f16, preload, preload_mut};
use offload_blas::{Matrix, MatrixMut, axpy, dot, gemm, gemv, nrm2};

/// `alpha a b + beta c` in f64: `a` is `m x k` (element `(i, p)` at `a(i, p)`), `b` `k x n`.
fn product(
    (m, k, n): (usize, usize, usize),
    alpha: f64,
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
    beta: f64,
    c: &[f64],
) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let sum: f64 = (0..k).map(|p| a(i, p) * b(p, j)).sum();
            out[i * n + j] = alpha * sum + beta * c[i * n + j];
        }
    }
    out
}

/// That `got` is `want` within `tolerance`, relative to `want`'s largest magnitude.
fn close(what: &str, got: impl IntoIterator<Item = f64>, want: &[f64], tolerance: f64) {
    let scale = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
    let got: Vec<f64> = got.into_iter().collect();
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tolerance * scale, "{what}[{i}]: {g}, expected {w}");
    }
}

/// The real types' routines, between kernels on the same guards: `$t`, the tolerance.
macro_rules! real_case {
    ($t:ty, $tolerance:expr) => {{
        let tolerance: f64 = $tolerance;
        let (m, k, n) = (37, 29, 41);
        let wide = k + 5;
        let a64 = values(1, m * k);
        let b64 = values(2, k * n);
        let c64 = values(3, m * n);
        let x64 = values(4, k);
        let y64 = values(5, m);
        let a: Vec<$t> = a64.iter().map(|&v| v as $t).collect();
        let b: Vec<$t> = b64.iter().map(|&v| v as $t).collect();
        // A stored transposed (`k x m`), and A as the left `m x k` of an `m x wide` matrix,
        // the tile starting 3 elements in.
        let at: Vec<$t> = (0..k * m).map(|q| a[(q % m) * k + q / m]).collect();
        let bt: Vec<$t> = (0..n * k).map(|q| b[(q % k) * n + q / k]).collect();
        let mut a_wide = vec![<$t>::NAN; 3 + m * wide];
        for i in 0..m {
            a_wide[3 + i * wide..3 + i * wide + k].copy_from_slice(&a[i * k..(i + 1) * k]);
        }
        let ones = vec![1.0 as $t; m * n];
        let mut c: Vec<$t> = c64.iter().map(|&v| v as $t).collect();
        let mut c2 = vec![<$t>::NAN; m * n];
        let mut c3 = vec![<$t>::NAN; m * n];
        // C as the left `m x n` of an `m x (n + 3)` matrix: the 3 columns past it stay NaN.
        let mut c4 = vec![<$t>::NAN; m * (n + 3)];
        let x: Vec<$t> = x64.iter().map(|&v| v as $t).collect();
        let mut y: Vec<$t> = y64.iter().map(|&v| v as $t).collect();
        let mut z = vec![<$t>::NAN; k];
        let (dot_xx, dot_xz, norm_x);
        {
            let (ga, gb, gat, gwide) =
                (preload(&a[..]), preload(&b[..]), preload(&at[..]), preload(&a_wide[..]));
            let gbt = preload(&bt[..]);
            let (gones, gx) = (preload(&ones[..]), preload(&x[..]));
            let mut gc = preload_mut(&mut c[..]);
            let blocks = (m * n).div_ceil(128) as u32;
            // c = 2 (c + 1) + 0.5 a b, then + 1: kernels on either side of the product.
            offload::launch_async!(kernels::axpy::<$t>, blocks, 128, (1.0 as $t, &gones, &mut gc))?;
            gemm(
                0.5,
                Matrix::new(&ga, m, k),
                Matrix::new(&gb, k, n),
                2.0,
                MatrixMut::new(&mut gc, m, n),
            )?;
            offload::launch_async!(kernels::axpy::<$t>, blocks, 128, (1.0 as $t, &gones, &mut gc))?;
            // The same product from A's transpose and from the tile: beta 0 ignores c2's NaNs.
            let mut gc2 = preload_mut(&mut c2[..]);
            gemm(
                1.0,
                Matrix::new(&gat, k, m).t(),
                Matrix::new(&gb, k, n),
                0.0,
                MatrixMut::new(&mut gc2, m, n),
            )?;
            let mut gc3 = preload_mut(&mut c3[..]);
            let tile = gwide.slice(3..);
            gemm(
                1.0,
                Matrix::with_ld(&tile, m, k, wide),
                Matrix::new(&gb, k, n),
                0.0,
                MatrixMut::new(&mut gc3, m, n),
            )?;
            // From B's transpose, into a tile of a wider C.
            let mut gc4 = preload_mut(&mut c4[..]);
            gemm(
                1.0,
                Matrix::new(&ga, m, k),
                Matrix::new(&gbt, n, k).t(),
                0.0,
                MatrixMut::with_ld(&mut gc4, m, n, n + 3),
            )?;
            // Refused: the shapes do not agree, the tile does not fit, an empty product into a
            // C that is not empty. Nothing runs; an empty C is nothing to do.
            let e = gemm(
                1.0,
                Matrix::new(&ga, m, k),
                Matrix::new(&gb, n, k),
                0.0,
                MatrixMut::new(&mut gc3, m, k),
            );
            assert!(matches!(e, Err(Error::InvalidOperands { routine: "gemm", .. })), "{e:?}");
            assert!(e.is_err_and(|e| {
                e.to_string().contains("op(A)'s columns and op(B)'s rows: 29 against 41")
            }));
            let e = gemm(
                1.0,
                Matrix::with_ld(&ga, m, 0, 1),
                Matrix::with_ld(&gb, 0, n, n),
                0.0,
                MatrixMut::new(&mut gc3, m, n),
            );
            assert!(e.is_err_and(|e| e.to_string().contains("op(A) has no columns")));
            gemm(
                1.0,
                Matrix::new(&ga, 0, k),
                Matrix::new(&gb, k, n),
                0.0,
                MatrixMut::new(&mut gc3, 0, n),
            )?;
            let e = gemm(
                1.0,
                Matrix::with_ld(&tile, m, k, wide + 1),
                Matrix::new(&gb, k, n),
                0.0,
                MatrixMut::new(&mut gc3, m, n),
            );
            assert!(
                e.is_err_and(|e| e.to_string().contains("which needs")),
                "a tile past the data"
            );
            // y = a x - y, then z = a' y.
            let mut gy = preload_mut(&mut y[..]);
            gemv(1.0, Matrix::new(&ga, m, k), &gx, -1.0, &mut gy)?;
            let mut gz = preload_mut(&mut z[..]);
            gemv(1.0, Matrix::new(&ga, m, k).t(), &gy, 0.0, &mut gz)?;
            let e = gemv(1.0, Matrix::new(&ga, m, k), &gy, 0.0, &mut gz);
            assert!(e.is_err_and(|e| {
                e.to_string().contains("op(A)'s columns and x's length: 29 against 37")
            }));
            let e = gemv(1.0, Matrix::with_ld(&ga, m, 0, 1), &gx.slice(..0), 0.0, &mut gy);
            assert!(e.is_err_and(|e| e.to_string().contains("op(A) has no columns")));
            // y += 2 c[..m] (a range of another guard), after the kernels and routines before it.
            let c_head = gc.slice(..m);
            axpy(2.0, &c_head, &mut gy)?;
            dot_xx = dot(&gx, &gx)?;
            dot_xz = dot(&gx, &gz)?;
            norm_x = nrm2(&gx)?;
            assert!(dot(&gx, &gy).is_err(), "lengths 29 and 37");
        }
        let c_want = product(
            (m, k, n),
            0.5,
            |i, p| a[i * k + p] as f64,
            |p, j| b[p * n + j] as f64,
            2.0,
            &c64.iter().map(|&v| v as $t as f64 + 1.0).collect::<Vec<_>>(),
        );
        let c_want: Vec<f64> = c_want.iter().map(|v| v + 1.0).collect();
        close(concat!(stringify!($t), " c"), c.iter().map(|&v| v as f64), &c_want, tolerance);
        let ab = product(
            (m, k, n),
            1.0,
            |i, p| a[i * k + p] as f64,
            |p, j| b[p * n + j] as f64,
            0.0,
            &vec![0.0; m * n],
        );
        close(concat!(stringify!($t), " c from a'"), c2.iter().map(|&v| v as f64), &ab, tolerance);
        close(
            concat!(stringify!($t), " c from the tile"),
            c3.iter().map(|&v| v as f64),
            &ab,
            tolerance,
        );
        let y_want = product(
            (m, k, 1),
            1.0,
            |i, p| a[i * k + p] as f64,
            |p, _| x[p] as f64,
            -1.0,
            &y64.iter().map(|&v| v as $t as f64).collect::<Vec<_>>(),
        );
        let z_want = product(
            (k, m, 1),
            1.0,
            |p, i| a[i * k + p] as f64,
            |i, _| y_want[i],
            0.0,
            &vec![0.0; k],
        );
        close(
            concat!(stringify!($t), " z"),
            z.iter().map(|&v| v as f64),
            &z_want,
            tolerance * 10.0,
        );
        let c_head: Vec<f64> = c_want[..m].to_vec();
        let y_after: Vec<f64> = y_want.iter().zip(&c_head).map(|(y, c)| y + 2.0 * c).collect();
        close(
            concat!(stringify!($t), " y"),
            y.iter().map(|&v| v as f64),
            &y_after,
            tolerance * 10.0,
        );
        let xx: f64 = x.iter().map(|&v| v as f64 * v as f64).sum();
        close(concat!(stringify!($t), " dot"), [dot_xx as f64], &[xx], tolerance);
        close(concat!(stringify!($t), " nrm2"), [norm_x as f64], &[xx.sqrt()], tolerance);
        let xz: f64 = x.iter().zip(&z).map(|(&x, &z)| x as f64 * z as f64).sum();
        close(concat!(stringify!($t), " dot of x and z"), [dot_xz as f64], &[xz], tolerance);
        let tile: Vec<f64> = (0..m * n).map(|q| c4[q / n * (n + 3) + q % n] as f64).collect();
        close(concat!(stringify!($t), " c from b' into a tile"), tile, &ab, tolerance);
        let outside = (0..m).flat_map(|i| (n..n + 3).map(move |j| (i, j)));
        for (i, j) in outside {
            assert!(c4[i * (n + 3) + j].is_nan(), "c4[{i}][{j}] written, outside the tile");
        }
        println!("ok: {} gemm, gemv, axpy, dot, nrm2", stringify!($t));
    }};
}

/// GEMM of a 16-bit type into f32, between two kernels on `c`.
macro_rules! half_case {
    ($t:ty) => {{
        let (m, k, n) = (48, 40, 24);
        let a: Vec<$t> = values(6, m * k).iter().map(|&v| <$t>::from_f32(v as f32)).collect();
        let b: Vec<$t> = values(7, k * n).iter().map(|&v| <$t>::from_f32(v as f32)).collect();
        let mut c = vec![0.5f32; m * n];
        let ones = vec![1.0f32; m * n];
        {
            let (ga, gb, gones) = (preload(&a[..]), preload(&b[..]), preload(&ones[..]));
            let mut gc = preload_mut(&mut c[..]);
            let blocks = (m * n).div_ceil(128) as u32;
            offload::launch_async!(kernels::saxpy, blocks, 128, (1.0f32, &gones, &mut gc))?;
            gemm(
                2.0,
                Matrix::new(&ga, m, k),
                Matrix::new(&gb, k, n),
                -1.0,
                MatrixMut::new(&mut gc, m, n),
            )?;
            offload::launch_async!(kernels::saxpy, blocks, 128, (3.0f32, &gones, &mut gc))?;
        }
        let want = product(
            (m, k, n),
            2.0,
            |i, p| a[i * k + p].to_f64(),
            |p, j| b[p * n + j].to_f64(),
            -1.0,
            &vec![1.5; m * n],
        );
        let want: Vec<f64> = want.iter().map(|v| v + 3.0).collect();
        // Exact inputs, accumulated in f32: k products of magnitude below 1.
        close(concat!(stringify!($t), " c"), c.iter().map(|&v| v as f64), &want, 1e-5);
        println!("ok: {} gemm into f32", stringify!($t));
    }};
}

fn main() -> Result<(), Error> {
    real_case!(f32, 1e-5);
    real_case!(f64, 1e-13);
    half_case!(bf16);
    half_case!(f16);
    Ok(())
}
