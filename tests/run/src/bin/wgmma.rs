//! Matrix products of a warpgroup (`offload::gpu::wgmma`) in bf16 and f16 into f32, for each
//! N the instruction has (64, 128, 256) and calls of K 128, 64, 32 and 16 (descriptors that
//! start in A's second panel, inside a row of it, and further down B's), against a
//! product on the CPU in f64 over the same inputs. Outside sm_90a images the warps' `mma.sync`
//! computes them over the same tiles.
//@ run: => h2d=12 d2h=4
//@ sm90a

#[path = "../inputs.rs"]
mod inputs;
#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use inputs::values;
use offload::{bf16, f16};

const M: usize = 128;
const N: usize = 256;
const K: usize = 256;

/// Checks `c` against `a * b` in f64 over the values the kernel multiplies.
fn check(name: &str, a: &[f64], b: &[f64], c: &[f32]) {
    let mut worst = 0.0f64;
    for i in 0..M {
        for j in 0..N {
            let (mut sum, mut magnitude) = (0.0, 0.0);
            for k in 0..K {
                sum += a[i * K + k] * b[k * N + j];
                magnitude += (a[i * K + k] * b[k * N + j]).abs();
            }
            let error = (f64::from(c[i * N + j]) - sum).abs() / magnitude;
            assert!(
                error <= 1e-4,
                "{name}: c[{i}][{j}] = {} against {sum} (relative error {error:.3e})",
                c[i * N + j]
            );
            worst = worst.max(error);
        }
    }
    println!("{name}: {M} x {N} x {K}, largest relative error {worst:.2e}");
}

fn main() -> Result<(), offload::Error> {
    let (a, b) = (values(1, M * K), values(2, K * N));
    let shared = |c: usize, bk: usize| 2 * (128 + 8 * c) * bk * 2;
    let (mu, nu, ku) = (M as u32, N as u32, K as u32);

    let (a16, b16): (Vec<bf16>, Vec<bf16>) = (
        a.iter().map(|&x| bf16::from_f32(x as f32)).collect(),
        b.iter().map(|&x| bf16::from_f32(x as f32)).collect(),
    );
    let (a_seen, b_seen): (Vec<f64>, Vec<f64>) =
        (a16.iter().map(|x| x.to_f64()).collect(), b16.iter().map(|x| x.to_f64()).collect());
    let mut c = vec![f32::NAN; M * N];
    offload::launch!(
        kernels::wgmma_gemm::<bf16, 8, 64, 1>,
        (nu / 64, mu / 128),
        256,
        shared = shared(8, 64),
        (mu, nu, ku, &a16[..], &b16[..], &mut c[..])
    )?;
    check("bf16, N 64, K 64 a call", &a_seen, &b_seen, &c);
    c.fill(f32::NAN);
    offload::launch!(
        kernels::wgmma_gemm::<bf16, 16, 64, 2>,
        (nu / 128, mu / 128),
        256,
        shared = shared(16, 64),
        (mu, nu, ku, &a16[..], &b16[..], &mut c[..])
    )?;
    check("bf16, N 128, K 32 a call", &a_seen, &b_seen, &c);
    c.fill(f32::NAN);
    offload::launch!(
        kernels::wgmma_gemm::<bf16, 32, 64, 4>,
        (nu / 256, mu / 128),
        256,
        shared = shared(32, 64),
        (mu, nu, ku, &a16[..], &b16[..], &mut c[..])
    )?;
    check("bf16, N 256, K 16 a call", &a_seen, &b_seen, &c);

    let (a16, b16): (Vec<f16>, Vec<f16>) = (
        a.iter().map(|&x| f16::from_f32(x as f32)).collect(),
        b.iter().map(|&x| f16::from_f32(x as f32)).collect(),
    );
    let (a_seen, b_seen): (Vec<f64>, Vec<f64>) =
        (a16.iter().map(|x| x.to_f64()).collect(), b16.iter().map(|x| x.to_f64()).collect());
    c.fill(f32::NAN);
    offload::launch!(
        kernels::wgmma_gemm::<f16, 16, 128, 1>,
        (nu / 128, mu / 128),
        256,
        shared = shared(16, 128),
        (mu, nu, ku, &a16[..], &b16[..], &mut c[..])
    )?;
    check("f16, N 128, K 128 a call (two panels of A)", &a_seen, &b_seen, &c);
    Ok(())
}
