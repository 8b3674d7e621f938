//! `offload::gpu::math` computes what `std` does: the exact functions bit for bit, the fast
//! approximations within their error bounds (on a GPU, PTX's `.approx` instructions).
//@ run: => h2d=4 d2h=2

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let x: Vec<f32> = vec![
        -2.5,
        -1.5,
        -0.5,
        -0.0,
        0.0,
        0.49999997,
        0.5,
        1.5,
        2.5,
        core::f32::consts::PI,
        7.25,
        1e-3,
    ];
    let w: Vec<f64> = x.iter().map(|&v| f64::from(v) * 1.000_000_1).collect();
    let mut out = vec![0f32; x.len() * 10];
    let mut out64 = vec![0f64; x.len() * 6];
    offload::launch!(kernels::float_math, 1, 32, (&x[..], &w[..], &mut out[..], &mut out64[..]))?;
    let mut bad = Vec::new();
    for (i, &v) in x.iter().enumerate() {
        let exact =
            [v.abs().sqrt(), v.mul_add(3.0, 0.5), v.floor(), v.ceil(), v.trunc(), v.round()];
        for (k, e) in exact.iter().enumerate() {
            if out[i * 10 + k].to_bits() != e.to_bits() {
                bad.push(format!("f32 fn {k} of {v}: {} (std: {e})", out[i * 10 + k]));
            }
        }
        // Within -pi..pi, |sin error| <= 2^-20.9; exp and ln within a few units in the last
        // place (relative 2^-21 here, with room).
        let fast = [
            (v.exp(), 1e-6 * v.exp().abs()),
            ((v.abs() + 1.0).ln(), 1e-6),
            (v.sin(), 1e-6),
            (v.cos(), 1e-6),
        ];
        for (k, (e, tolerance)) in fast.iter().enumerate() {
            let got = out[i * 10 + 6 + k];
            if (got - e).abs() > *tolerance {
                bad.push(format!("f32 fast fn {k} of {v}: {got} (std: {e})"));
            }
        }
        let v = w[i];
        let exact =
            [v.abs().sqrt(), v.mul_add(3.0, 0.5), v.floor(), v.ceil(), v.trunc(), v.round()];
        for (k, e) in exact.iter().enumerate() {
            if out64[i * 6 + k].to_bits() != e.to_bits() {
                bad.push(format!("f64 fn {k} of {v}: {} (std: {e})", out64[i * 6 + k]));
            }
        }
    }
    if !bad.is_empty() {
        panic!("{} results differ from std:\n{}", bad.len(), bad.join("\n"));
    }
    println!("ok: {} f32 and {} f64 inputs", x.len(), w.len());
    Ok(())
}
