//! Shared memory and barriers: block sums by halves and blocks reversed in place, each through
//! the block's shared memory with `sync_threads` between its steps, in the host-offload image
//! (a block's threads at once; its blocks on three system threads with OFFLOAD_HOST_THREADS=3)
//! as on a GPU; the memory's length as a kernel sees it; more than any GPU has refused. Under `OFFLOAD_LAUNCH=runtime` on a GPU (libomptarget 19's launch has
//! no shared memory) each is refused, which the program checks, computing on the host then.
//! A histogram counted per block with atomic additions in shared memory; threads that return
//! before a barrier, which the others do not wait for. Copies: 2 in and 1 out, 1 in and 1 out,
//! 2 in and 1 out, 1 in and 1 out, 1 in and 1 out.
//@ run: 8 => h2d=7 d2h=5
//@ run: 8 => h2d=7 d2h=5 env=OFFLOAD_HOST_THREADS=3
//@ run: 8 => h2d=7 d2h=5 env=OFFLOAD_LAUNCH=runtime

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::Error;

#[path = "../runtime_launch.rs"]
mod runtime_launch;

fn main() -> Result<(), Error> {
    let blocks: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(8);
    let threads = 64usize;
    let n = blocks * threads - 5;
    let values: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    let mut sums = vec![-1.0f32; blocks];
    let shared = (threads * 4) as u32;
    let launched = offload::launch!(
        kernels::block_sums,
        blocks as u32,
        threads as u32,
        shared = shared,
        (&values[..], &mut sums[..])
    );
    // Refused: the same copies through a launch without shared memory, the sums by the host.
    let on_host = runtime_launch::refused(&launched);
    if on_host {
        offload::launch!(kernels::histogram, 1, 1, (&[0u32][..], &mut [0u32][..]))?;
    } else {
        launched?;
    }
    for (b, sum) in sums.iter().enumerate() {
        let expected: f32 = values.iter().skip(b * threads).take(threads).sum();
        if !on_host {
            assert_eq!(*sum, expected, "block {b}");
        }
    }

    let mut reversed: Vec<u32> = (0..(blocks * threads) as u32).collect();
    let launched = offload::launch!(
        kernels::reverse_blocks,
        blocks as u32,
        threads as u32,
        shared = shared,
        (&mut reversed[..],)
    );
    if runtime_launch::refused(&launched) {
        offload::launch!(kernels::increment, 1, 1, (&mut reversed[..1],))?;
    } else {
        launched?;
        for (i, v) in reversed.iter().enumerate() {
            let (b, t) = (i / threads, i % threads);
            assert_eq!(*v as usize, b * threads + threads - 1 - t, "element {i}");
        }
    }

    // A histogram counted per block in shared memory, with atomic additions there.
    let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 9).collect();
    let mut bins = vec![0u32; 19];
    let launched = offload::launch!(
        kernels::block_histogram,
        blocks as u32,
        threads as u32,
        shared = 19 * 4,
        (&values[..], &mut bins[..])
    );
    let refused = runtime_launch::refused(&launched);
    if refused {
        offload::launch!(
            kernels::histogram,
            blocks as u32,
            threads as u32,
            (&values[..], &mut bins[..])
        )?;
    } else {
        launched?;
    }
    let mut expected = vec![0u32; 19];
    for v in &values {
        expected[*v as usize % 19] += 1;
    }
    assert_eq!(bins, expected, "histogram");

    // Threads past `n` return before the barrier: the others must not wait for them.
    let mut first: Vec<u32> = (0..32).collect();
    let launched =
        offload::launch!(kernels::reverse_first, 1, 32, shared = 128, (30u32, &mut first[..]));
    if runtime_launch::refused(&launched) {
        offload::launch!(kernels::increment, 1, 1, (&mut first[..1],))?;
    } else {
        launched?;
        let expected: Vec<u32> = (0..30).rev().chain([30, 31]).collect();
        assert_eq!(first, expected, "the first 30 reversed");
    }

    let mut len = [0u32];
    let launched = offload::launch!(kernels::shared_len, 1, 32, shared = 100, (&mut len,));
    if runtime_launch::refused(&launched) {
        offload::launch!(kernels::shared_len, 1, 32, (&mut len,))?;
        assert_eq!(len, [0]);
    } else {
        launched?;
        assert_eq!(len, [12], "100 bytes hold 12 u64s");
    }

    match offload::launch!(kernels::shared_len, 1, 32, shared = 228 << 10, (&mut len,)) {
        Err(Error::InvalidGeometry { reason, .. }) => {
            assert!(reason.contains("227 KiB"), "{reason}")
        }
        other => panic!("not refused: {other:?}"),
    }
    println!(
        "ok: {blocks} blocks of {threads} threads{}",
        if on_host { " (refused, as libomptarget's launch has no shared memory)" } else { "" }
    );
    Ok(())
}
