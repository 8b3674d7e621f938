//! saxpy with plain references: every launch copies x and y in and y out (2K in, K out).
//@ run: 1 => h2d=2 d2h=1
//@ run: 4 => h2d=8 d2h=4

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 4099;
    let xs: Vec<f32> = (0..n).map(|i| (i % 64) as f32).collect();
    let mut ys = vec![2.0f32; n];
    for _ in 0..k {
        offload::launch!(
            kernels::saxpy,
            n.div_ceil(64) as u32,
            64,
            (2.0f32, &xs[..], &mut ys[..])
        )?;
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 2.0 + k as f32 * 2.0 * (i % 64) as f32, "y[{i}]");
    }
    println!("ok: {k} launches");
    Ok(())
}
