//! Matrix products on the tensor cores (`offload::gpu::mma`) in bf16, f16, TF32, 3xTF32 and
//! f64, each against a product on the CPU in f64 over the same inputs as the kernel sees them
//! (rounded to the format first; for 3xTF32 the `f32` inputs themselves), within what
//! accumulating in the kind's type allows: straight from device memory into an accumulator
//! loaded from `c` (`c += a * b`), and through shared memory filled by `copy_async` and read
//! with `ldmatrix` (`c = alpha * a * b`). The TF32 inputs are rounded by the test as the tensor
//! cores round them (to nearest, ties away): a product of inputs rounded any other way would
//! miss by far more than the tolerance. Last, 3xTF32 with a NaN and an infinity in A: NaN in
//! their rows of `c`, as `Tf32x3` documents.
//@ run: => h2d=33 d2h=11
//@ run: => h2d=33 d2h=11 env=OFFLOAD_HOST_THREADS=3

#[path = "../inputs.rs"]
mod inputs;
#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use inputs::values;
use offload::gpu::mma::{Tf32, Tf32x3};
use offload::{bf16, f16};

const N: usize = 64;

/// `f32` rounded to TF32 as the tensor cores' `cvt.rna.tf32.f32` does.
fn tf32(x: f32) -> f64 {
    f64::from(f32::from_bits(x.to_bits().wrapping_add(0x1000) & !0x1fff))
}

/// One kind's test: the inputs as the kernel reads them, their values, and the tolerance
/// relative to the sum of the products' magnitudes.
struct Case<T> {
    name: &'static str,
    a: Vec<T>,
    b: Vec<T>,
    /// The values the tensor cores multiply.
    a_seen: Vec<f64>,
    b_seen: Vec<f64>,
    tolerance: f64,
}

fn case<T: Copy>(
    name: &'static str,
    make: impl Fn(f64) -> T,
    seen: impl Fn(T) -> f64,
    tolerance: f64,
) -> Case<T> {
    let (a, b): (Vec<T>, Vec<T>) = (
        values(1, N * N).into_iter().map(&make).collect(),
        values(2, N * N).into_iter().map(&make).collect(),
    );
    let (a_seen, b_seen) =
        (a.iter().map(|&x| seen(x)).collect(), b.iter().map(|&x| seen(x)).collect());
    Case { name, a, b, a_seen, b_seen, tolerance }
}

/// Checks `got` against `alpha * a * b + c0` element by element.
fn check<T, A: Copy + Into<f64>>(case: &Case<T>, how: &str, got: &[A], c0: &[f64], alpha: f64) {
    let (a, b) = (&case.a_seen, &case.b_seen);
    let mut worst = 0.0f64;
    for i in 0..N {
        for j in 0..N {
            let (mut sum, mut magnitude) = (0.0, 0.0);
            for k in 0..N {
                sum += a[i * N + k] * b[k * N + j];
                magnitude += (a[i * N + k] * b[k * N + j]).abs();
            }
            let want = alpha * sum + c0[i * N + j];
            let got = got[i * N + j].into();
            let error = (got - want).abs() / (magnitude + c0[i * N + j].abs());
            assert!(
                error <= case.tolerance,
                "{} {how}: c[{i}][{j}] = {got} against {want} (relative error {error:.3e})",
                case.name
            );
            worst = worst.max(error);
        }
    }
    println!(
        "{} {how}: largest relative error {worst:.2e} (tolerance {:.0e})",
        case.name, case.tolerance
    );
}

/// 3xTF32 with a NaN in row 0 of A and an infinity in row 1: those rows of `c` are NaN (an
/// infinity's tail, infinity minus itself, is not a number), the others right.
fn tf32x3_non_finite() -> Result<(), offload::Error> {
    const M: usize = 16;
    let mut a: Vec<f32> = values(3, M * M).into_iter().map(|x| x as f32).collect();
    let b: Vec<f32> = values(4, M * M).into_iter().map(|x| x as f32).collect();
    a[3] = f32::NAN;
    a[M + 5] = f32::INFINITY;
    let mut c = vec![0.0f32; M * M];
    let n = M as u32;
    offload::launch!(
        kernels::mma_direct::<Tf32x3>,
        [n / 8, n / 16],
        32,
        (n, &a[..], &b[..], &mut c[..])
    )?;
    for i in 0..M {
        for j in 0..M {
            let got = c[i * M + j];
            if i < 2 {
                assert!(got.is_nan(), "tf32x3 non-finite: c[{i}][{j}] = {got}, not NaN");
                continue;
            }
            let terms = (0..M).map(|k| f64::from(a[i * M + k]) * f64::from(b[k * M + j]));
            let (want, magnitude) = terms.fold((0.0, 0.0), |(s, m), t| (s + t, m + t.abs()));
            let error = (f64::from(got) - want).abs() / magnitude;
            assert!(error <= 4e-6, "tf32x3 non-finite: c[{i}][{j}] = {got} against {want}");
        }
    }
    println!("tf32x3 non-finite: NaN in the rows of the NaN and the infinity, the rest right");
    Ok(())
}

macro_rules! run {
    ($kind:ty, $chunk:literal, $case:expr, $acc:ty) => {{
        let case = $case;
        let n = N as u32;
        // Straight from device memory, onto c0.
        let c0: Vec<$acc> = (0..N * N).map(|i| (i % 7) as $acc - 3.0).collect();
        let mut c = c0.clone();
        offload::launch!(
            kernels::mma_direct::<$kind>,
            [n / 8, n / 16],
            32,
            (n, &case.a[..], &case.b[..], &mut c[..])
        )?;
        let c0: Vec<f64> = c0.iter().map(|&v| v.into()).collect();
        check(&case, "direct", &c, &c0, 1.0);
        // Through shared memory, scaled.
        let mut c = vec![<$acc>::NAN; N * N];
        let shared = 5 * 32 * (32 + $chunk) * size_of_val(&case.a[0]);
        offload::launch!(
            kernels::mma_shared::<$kind, $chunk>,
            [n / 32, n / 32],
            128,
            shared = shared,
            (n, 0.5f32, &case.a[..], &case.b[..], &mut c[..])
        )?;
        check(&case, "shared", &c, &vec![0.0; N * N], 0.5);
    }};
}

fn main() -> Result<(), offload::Error> {
    // f32 accumulation of 64 exact products: within a few units of f32's last place.
    run!(bf16, 8, case("bf16", |x| bf16::from_f32(x as f32), |x: bf16| x.to_f64(), 1e-6), f32);
    run!(f16, 8, case("f16", |x| f16::from_f32(x as f32), |x: f16| x.to_f64(), 1e-6), f32);
    run!(Tf32, 4, case("tf32", |x| x as f32, tf32, 1e-6), f32);
    // 3xTF32 against the f32 inputs themselves: per product, the tails' product and their
    // rounding miss by at most 2^-21 of it; with 3 roundings to f32 per step of 8 (24 for 64
    // products), within 2e-6. Plain TF32 would miss by about 2^-11 (5e-4).
    run!(Tf32x3, 4, case("tf32x3", |x| x as f32, f64::from, 4e-6), f32);
    run!(f64, 2, case("f64", |x| x, |x: f64| x, 1e-14), f64);
    tf32x3_non_finite()?;
    println!("ok");
    Ok(())
}
