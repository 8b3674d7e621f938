//! Warp operations (`offload::gpu::warp`): shuffles of 32-bit and 64-bit values, both halves
//! of these set (down, up, butterfly, from a lane), and votes (ballot, any, all), over 8 warps
//! in 4 blocks of 64, each thread writing a row of results; checked against a model of CUDA's
//! definitions; launched with shared memory and again without (in the host-offload image a
//! block's threads run at once either way, from its first thread's first warp operation);
//! also with the blocks on three system threads.
//@ run: => h2d=2 d2h=2
//@ run: => h2d=2 d2h=2 env=OFFLOAD_HOST_THREADS=3

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

const BLOCKS: usize = 4;
const THREADS: usize = 64;

/// The row thread `t` writes.
fn expected(t: usize) -> [i64; 8] {
    let (warp, lane) = (t / 32, t % 32);
    let first = warp * 32;
    // Lane `lane`'s sum after the shuffle_down steps: past lane 31 a lane adds its own value.
    let mut sums: Vec<i64> =
        (first..first + 32).map(|u| -(((u as i64) << 33) | u as i64)).collect();
    for offset in [16, 8, 4, 2, 1] {
        let before = sums.clone();
        for (l, sum) in sums.iter_mut().enumerate() {
            *sum += before.get(l + offset).copied().unwrap_or(before[l]);
        }
    }
    let max = (first..first + 32).map(|u| ((u as u64) << 35) | (1000 - u as u64)).max().unwrap();
    let ballot = (0..32).filter(|l| (first + l) % 3 == 0).fold(0u32, |m, l| m | 1 << l);
    [
        sums[lane],
        max as i64,
        ((first + 3) as f64 * 0.1).to_bits() as i64,
        if lane == 0 { t as i64 - 100 } else { t as i64 - 101 },
        if lane == 31 { t } else { t + 1 } as i64,
        ballot as i64,
        (warp % 2 == 0) as i64,
        1,
    ]
}

fn main() -> Result<(), offload::Error> {
    let n = BLOCKS * THREADS;
    let mut rows = vec![-1i64; n * 8];
    offload::launch!(
        kernels::warp_rows,
        BLOCKS as u32,
        THREADS as u32,
        shared = 4,
        (&mut rows[..],)
    )?;
    for t in 0..n {
        assert_eq!(rows[t * 8..t * 8 + 8], expected(t), "thread {t}");
    }
    let warp_sum = |w: i64| -(w * 32..w * 32 + 32).map(|u| (u << 33) | u).sum::<i64>();
    assert_eq!(rows[0], warp_sum(0), "lane 0 holds its warp's sum");
    assert_eq!(rows[7 * 32 * 8], warp_sum(7), "lane 0 holds its warp's sum");
    // The same without shared memory: in the host-offload image each block's threads run at
    // once from its first thread's first warp operation, as with it.
    let mut again = vec![-1i64; n * 8];
    offload::launch!(kernels::warp_rows, BLOCKS as u32, THREADS as u32, (&mut again[..],))?;
    assert_eq!(again, rows, "without shared memory");
    println!("ok: {} warps", n / 32);
    Ok(())
}
