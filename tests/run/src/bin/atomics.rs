//! `offload::gpu::atomic` from every thread of a grid at once: a histogram (u32), sums in f32
//! and f64 (of values whose sums are exact in any order), the maximum and minimum of i32s and a
//! 64-bit sum, and tickets that must come out as a permutation (the values the additions
//! returned). Each launch maps its data: 12 copies in, 8 out. In the host-offload image the
//! grid's blocks run on the machine's cores, on one thread (`OFFLOAD_HOST_THREADS=1`) or on
//! three.
//@ run: 100000 => h2d=12 d2h=8
//@ run: 100000 => h2d=12 d2h=8 env=OFFLOAD_HOST_THREADS=1
//@ run: 100000 => h2d=12 d2h=8 env=OFFLOAD_HOST_THREADS=3

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let threads = 256;
    let blocks = n.div_ceil(threads) as u32;

    let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
    let mut bins = vec![0u32; 37];
    offload::launch!(kernels::histogram, blocks, threads as u32, (&values[..], &mut bins[..]))?;
    let mut expected = vec![0u32; 37];
    for v in &values {
        expected[*v as usize % 37] += 1;
    }
    assert_eq!(bins, expected, "histogram");

    let small: Vec<f32> = (0..n).map(|i| (i % 16) as f32).collect();
    let mut total = 0.0f32;
    offload::launch!(kernels::sum_f32, blocks, threads as u32, (&small[..], &mut total))?;
    assert_eq!(total, small.iter().sum::<f32>(), "f32 sum");

    let halves: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 * 0.5).collect();
    let mut total = 0.0f64;
    offload::launch!(kernels::sum_f64, blocks, threads as u32, (&halves[..], &mut total))?;
    assert_eq!(total, halves.iter().sum::<f64>(), "f64 sum");

    let signed: Vec<i32> = values.iter().map(|&v| v as i32 - (1 << 24)).collect();
    let (mut max, mut min, mut wide) = (i32::MIN, i32::MAX, 0i64);
    offload::launch!(
        kernels::extremes,
        blocks,
        threads as u32,
        (&signed[..], &mut max, &mut min, &mut wide)
    )?;
    assert_eq!(max, *signed.iter().max().unwrap(), "max");
    assert_eq!(min, *signed.iter().min().unwrap(), "min");
    let expected_wide = signed.iter().map(|&v| i64::from(v) << 32).fold(0i64, i64::wrapping_add);
    assert_eq!(wide, expected_wide, "64-bit sum");

    let (mut counter, mut taken) = (0u32, vec![u32::MAX; n]);
    offload::launch!(kernels::tickets, blocks, threads as u32, (&mut counter, &mut taken[..]))?;
    assert_eq!(counter as usize, n, "tickets handed out");
    taken.sort_unstable();
    assert!(taken.iter().enumerate().all(|(i, &t)| t as usize == i), "tickets are not 0..n");

    println!("ok: {n} values, bins {:?}..., max {max}, min {min}", &bins[..3]);
    Ok(())
}
