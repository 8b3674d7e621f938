//! A barrier and warp operations in some blocks only, not the first: in the host-offload image
//! each block finds out for itself that its threads wait (the first to wait is a thread in the
//! middle of its block, those before it having returned), on one system thread and on three.
//@ run: => h2d=2 d2h=2
//@ run: => h2d=2 d2h=2 env=OFFLOAD_HOST_THREADS=3

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

const BLOCKS: usize = 6;
const THREADS: usize = 96;
const SKIP: usize = 40;
const UNTOUCHED: u64 = u64::MAX;

/// The row thread `t` of block `b` writes, `[UNTOUCHED; 2]` where it returns first.
fn expected(b: usize, t: usize) -> [u64; 2] {
    let i = b * THREADS + t;
    if b.is_multiple_of(2) {
        return [i as u64, 0];
    }
    if t < SKIP {
        return [UNTOUCHED; 2];
    }
    if t < 64 {
        return [(THREADS - SKIP) as u64, 0];
    }
    // Lane `lane`'s sum after the shuffle_down steps: past lane 31 a lane adds its own value.
    let first = i - t % 32;
    let mut sums: Vec<u64> = (first..first + 32).map(|u| u as u64).collect();
    for offset in [16, 8, 4, 2, 1] {
        let before = sums.clone();
        for (l, sum) in sums.iter_mut().enumerate() {
            *sum += before.get(l + offset).copied().unwrap_or(before[l]);
        }
    }
    [(THREADS - SKIP) as u64, sums[t % 32]]
}

fn main() -> Result<(), offload::Error> {
    let mut arrived = [0u32; BLOCKS];
    let mut out = vec![UNTOUCHED; BLOCKS * THREADS * 2];
    offload::launch!(
        kernels::odd_blocks_wait,
        BLOCKS as u32,
        THREADS as u32,
        (SKIP as u32, &mut arrived[..], &mut out[..])
    )?;
    for (b, &arrivals) in arrived.iter().enumerate() {
        let count = if b % 2 == 1 { THREADS - SKIP } else { 0 };
        assert_eq!(arrivals, count as u32, "block {b}'s arrivals");
        for t in 0..THREADS {
            let i = b * THREADS + t;
            assert_eq!(out[2 * i..2 * i + 2], expected(b, t), "thread {t} of block {b}");
        }
    }
    // Lane 0 of block 1's third warp.
    let lane_0 = THREADS + 64;
    assert_eq!(out[2 * lane_0 + 1], (lane_0..lane_0 + 32).sum::<usize>() as u64, "a warp's sum");
    println!("ok: {} blocks, {} waited", BLOCKS, BLOCKS / 2);
    Ok(())
}
