use std::cell::RefCell;

use super::block::{InTurn, run_block_at_once};
use super::run_grid;
use super::stack::{MAX_STACKS, Stacks};
use crate::geometry::Geometry;
use crate::gpu::warp::WARP_SIZE;
use crate::gpu::warp_imp::Warp;

/// Thread `t` of a block of 6 passes `t` barriers and ends (thread 0 before the first):
/// every barrier holds until each thread that has not ended reaches it, and no longer.
#[test]
fn a_block_at_once_waits_at_each_barrier_for_the_threads_that_have_not_ended() {
    let log = RefCell::new(Vec::new());
    let mut stacks = Stacks::take(6);
    crate::gpu::imp::set([[0; 3], [0; 3], [6, 1, 1], [1; 3]]);
    let threads = (0..6).map(|x| (x, [x, 0, 0]));
    run_block_at_once(&mut stacks, &mut [Warp::default()], threads, None, || {
        let t = crate::gpu::thread_idx_x();
        for phase in 0..t {
            log.borrow_mut().push((phase, t));
            crate::gpu::sync_threads();
        }
        log.borrow_mut().push((t, t));
    });
    crate::gpu::imp::set(crate::gpu::imp::OUTSIDE);
    let log = log.into_inner();
    // Each phase's events, in the threads' order, before any of the next phase's.
    let expected: Vec<(usize, usize)> =
        (0..6).flat_map(|phase| (phase..6).map(move |t| (phase, t))).collect();
    assert_eq!(log, expected);
    // Every stack is back for the next block, and the barrier is off outside the block.
    assert_eq!(stacks.0.len(), 6);
    let outside = std::panic::catch_unwind(crate::gpu::sync_threads).unwrap_err();
    let message = outside.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(message.contains("sync_threads was called outside a kernel"), "{message}");
}

/// Blocks of a launch with shared memory, enough for several system threads (128 of 256
/// threads: `host_workers`): each block's threads see only their block's memory, zeroed
/// for it, and wait for each other.
#[test]
fn blocks_with_shared_memory_each_have_their_own_zeroed_memory() {
    use core::sync::atomic::{AtomicU32, Ordering};
    const BLOCKS: usize = 128;
    const THREADS: usize = 256;
    let geometry =
        Geometry { grid: [BLOCKS as u32, 1, 1], block: [THREADS as u32, 1, 1], shared: 1024 };
    let wrong = AtomicU32::new(0);
    let sums: Vec<AtomicU32> = (0..BLOCKS).map(|_| AtomicU32::new(0)).collect();
    let body = || {
        let (t, b) = (crate::gpu::thread_idx_x(), crate::gpu::block_idx_x());
        let memory = crate::gpu::shared::<u32>();
        if memory.read(t) != 0 {
            wrong.fetch_add(1, Ordering::Relaxed);
        }
        memory.write(t, (b * 1000 + t) as u32);
        crate::gpu::sync_threads();
        // Thread t reads its neighbour's value: written before the barrier.
        let next = (t + 1) % THREADS;
        let theirs = memory.read(next);
        if theirs != (b * 1000 + next) as u32 {
            wrong.fetch_add(1, Ordering::Relaxed);
        }
        sums[b].fetch_add(theirs, Ordering::Relaxed);
    };
    // SAFETY: the slot of a live geometry; the body shares only atomics.
    unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) };
    assert_eq!(wrong.load(Ordering::Relaxed), 0);
    for (b, sum) in sums.iter().enumerate() {
        let expected = b * 1000 * THREADS + THREADS * (THREADS - 1) / 2;
        assert_eq!(sum.load(Ordering::Relaxed), expected as u32, "block {b}");
    }
}

/// Runs a block of `threads` threads (along x) at once, `body` per thread; returns the
/// panic's message, if one ended it.
fn block_at_once(threads: usize, body: impl Fn()) -> Option<String> {
    let mut stacks = Stacks::take(threads);
    let mut warps = vec![Warp::default(); threads.div_ceil(WARP_SIZE)];
    crate::gpu::imp::set([[0; 3], [0; 3], [threads, 1, 1], [1; 3]]);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let all = (0..threads).map(|x| (x, [x, 0, 0]));
        run_block_at_once(&mut stacks, &mut warps, all, None, body)
    }));
    crate::gpu::imp::set(crate::gpu::imp::OUTSIDE);
    crate::gpu::warp_imp::set_warps(core::ptr::null_mut(), 0);
    result.err().map(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Shuffles and votes over two warps of a block, the last lane of the second returning
/// before them: it is out of the votes, and a shuffle from it gives the caller's own value.
#[test]
fn warp_operations_exchange_within_each_warp() {
    use crate::gpu::warp;
    let out = RefCell::new(vec![[0i64; 8]; 64]);
    let message = block_at_once(64, || {
        let t = crate::gpu::thread_idx_x();
        if t == 63 {
            return;
        }
        let lane = warp::lane_id();
        assert_eq!(lane, t % 32);
        let sum = warp::sum(t as i64);
        let mut all = t as u32;
        for mask in [16, 8, 4, 2, 1] {
            all = all.max(warp::shuffle_xor(all, mask));
        }
        let row = [
            sum,
            all as i64,
            warp::shuffle(t as f64 * 0.5, 3) as i64,
            warp::shuffle_up(t as i32, 1) as i64,
            warp::ballot(t.is_multiple_of(2)) as i64,
            warp::any(t == 5) as i64,
            warp::all(t < 63) as i64,
            warp::shuffle_down(t as u32, 1) as i64,
        ];
        out.borrow_mut()[t] = row;
    });
    assert_eq!(message, None);
    let out = out.into_inner();
    // The shuffle_down sum in lane 0, modelled: past lane 31, or from a lane that has
    // returned, a lane adds its own value.
    let tree = |present: usize, base: i64| {
        let mut sums: Vec<i64> = (0..32).map(|l| base + l).collect();
        for offset in [16, 8, 4, 2, 1] {
            let before = sums.clone();
            for (l, sum) in sums.iter_mut().enumerate() {
                let source = l + offset;
                *sum += if source < present { before[source] } else { before[l] };
            }
        }
        sums[0]
    };
    assert_eq!(out[0][0], tree(32, 0));
    assert_eq!(out[0][0], (0..32).sum::<i64>());
    assert_eq!(out[32][0], tree(31, 32), "lane 31 of warp 1 has returned");
    for (t, row) in out.iter().enumerate().take(63) {
        let warp = t / 32;
        assert_eq!(row[1], if warp == 0 { 31 } else { 62 }, "butterfly max, thread {t}");
        assert_eq!(row[2], (warp * 32 + 3) as i64 / 2, "broadcast of lane 3, thread {t}");
        assert_eq!(row[3], if t % 32 == 0 { t } else { t - 1 } as i64, "up, thread {t}");
        // The even lanes (lane 31 of warp 1, which has returned, is odd).
        assert_eq!(row[4], 0x5555_5555, "ballot, thread {t}");
        assert_eq!(row[5], (warp == 0) as i64, "any, thread {t}");
        assert_eq!(row[6], 1, "all of those that vote, thread {t}");
        let down = if t % 32 == 31 || t == 62 { t } else { t + 1 };
        assert_eq!(row[7], down as i64, "down by one, thread {t}");
    }
}

/// What a GPU would not finish either ends the launch with a panic naming the threads.
#[test]
fn warps_that_wait_where_none_can_go_on_are_named() {
    use crate::gpu::warp;
    let crossed = block_at_once(64, || {
        if crate::gpu::thread_idx_x() < 32 {
            warp::any(true);
        }
        crate::gpu::sync_threads();
        warp::any(true);
    });
    assert_eq!(crossed, None, "warp 0's vote, then the barrier: both finish");
    let stuck = block_at_once(64, || {
        if crate::gpu::thread_idx_x().is_multiple_of(32) {
            crate::gpu::sync_threads();
        }
        warp::any(true);
    })
    .unwrap();
    assert!(stuck.contains("wait where none can go on"), "{stuck}");
    assert!(stuck.contains("at sync_threads [0, 0, 0] [32, 0, 0]"), "{stuck}");
}

/// Outside a kernel, a warp operation refuses.
#[test]
fn warp_operations_outside_a_kernel_refuse() {
    let refused = std::panic::catch_unwind(|| crate::gpu::warp::ballot(true)).unwrap_err();
    let message = refused.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(message.contains("warp operations were called outside a kernel"), "{message}");
}

/// A kernel's panic in a block whose threads run at once leaves no pointer behind: a
/// barrier or a warp operation after it refuses, as outside any launch.
#[test]
fn a_panic_in_a_block_at_once_leaves_nothing_behind() {
    let geometry = Geometry { grid: [2, 1, 1], block: [64, 1, 1], shared: 16 };
    let panicked = std::panic::catch_unwind(|| {
        let body = || {
            crate::gpu::sync_threads();
            if crate::gpu::thread_idx_x() == 40 {
                panic!("thread 40");
            }
            crate::gpu::warp::any(true);
        };
        // SAFETY: the slot of a live geometry; the body shares nothing.
        unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) };
    });
    assert!(panicked.is_err());
    for refused in [
        std::panic::catch_unwind(crate::gpu::sync_threads).unwrap_err(),
        std::panic::catch_unwind(|| crate::gpu::warp::ballot(true)).unwrap_err(),
    ] {
        let message = refused.downcast_ref::<&str>().copied().unwrap_or_default();
        assert!(message.contains("called outside a kernel"), "{message}");
    }
    assert_eq!(crate::gpu::block_dim_x(), 1, "the indices are those outside a kernel");
}

/// Offsets, lanes and masks are read modulo 32, as the hardware reads them.
#[test]
fn shuffle_offsets_are_read_modulo_32() {
    use crate::gpu::warp;
    let out = RefCell::new(vec![[0u32; 4]; 32]);
    let message = block_at_once(32, || {
        let t = crate::gpu::thread_idx_x();
        out.borrow_mut()[t] = [
            warp::shuffle_down(t as u32, 33),
            warp::shuffle_up(t as u32, 64 + 2),
            warp::shuffle(t as u32, 32 + 7),
            warp::shuffle_xor(t as u32, 32 + 1),
        ];
    });
    assert_eq!(message, None);
    for (t, row) in out.into_inner().into_iter().enumerate() {
        let down = if t == 31 { t } else { t + 1 };
        let up = t.checked_sub(2).unwrap_or(t);
        assert_eq!(row, [down, up, 7, t ^ 1].map(|v| v as u32), "thread {t}");
    }
}

/// Without shared memory, a grid whose threads all wait at a barrier and a warp operation:
/// each thread sees the others' writes before the barrier, and a warp's shuffles exchange,
/// on one or several system threads.
#[test]
fn a_grid_whose_threads_all_wait_runs_each_block_at_once() {
    use core::sync::atomic::{AtomicU32, Ordering};
    for blocks in [3u32, 160] {
        let geometry = Geometry { grid: [blocks, 1, 1], block: [256, 1, 1], shared: 0 };
        let n = blocks as usize * 256;
        let values: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        let wrong = AtomicU32::new(0);
        let body = || {
            let i = crate::gpu::global_id_x();
            values[i].store(i as u32 + 1, Ordering::Relaxed);
            crate::gpu::sync_threads();
            let block = i - crate::gpu::thread_idx_x();
            let neighbour = block + (crate::gpu::thread_idx_x() + 1) % 256;
            let from_lane_0 = crate::gpu::warp::shuffle(i as u32, 0);
            if values[neighbour].load(Ordering::Relaxed) != neighbour as u32 + 1
                || from_lane_0 != (i - crate::gpu::warp::lane_id()) as u32
            {
                wrong.fetch_add(1, Ordering::Relaxed);
            }
        };
        // SAFETY: the slot of a live geometry; the body shares only atomics.
        unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) };
        assert_eq!(wrong.load(Ordering::Relaxed), 0, "{blocks} blocks");
    }
}

/// Threads that end before one of their block waits are done, as a GPU's barrier does not
/// wait for exited threads: a block whose thread 0 returns early still meets at its barrier.
#[test]
fn threads_that_end_before_one_waits_are_done() {
    use core::sync::atomic::{AtomicU32, Ordering};
    let geometry = Geometry { grid: [2, 1, 1], block: [32, 1, 1], shared: 0 };
    let met = AtomicU32::new(0);
    let body = || {
        if crate::gpu::thread_idx_x() == 0 {
            return;
        }
        met.fetch_add(1, Ordering::Relaxed);
        crate::gpu::sync_threads();
        // Every thread of the block that has not returned is past the barrier's arrivals.
        assert!(met.load(Ordering::Relaxed) as usize >= 31 * (crate::gpu::block_idx_x() + 1));
    };
    // SAFETY: the slot of a live geometry; the body shares only an atomic.
    unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) };
    assert_eq!(met.load(Ordering::Relaxed), 62);
}

/// Each block finds out for itself whether its threads wait for each other: here only the
/// odd blocks do (block 0 does not), at a barrier and at warp operations, from a thread in
/// the middle of a block along y (those before it return at once), on one system thread and
/// on several. Barriers hold, shuffles exchange within the warps, and a warp's exchange is
/// clean for each block that uses it.
#[test]
fn each_block_finds_out_whether_its_threads_wait() {
    use core::sync::atomic::{AtomicU32, Ordering};
    for blocks in [4u32, 160] {
        let geometry = Geometry { grid: [blocks, 1, 1], block: [64, 4, 1], shared: 0 };
        let n = blocks as usize * 256;
        let values: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        let (checked, wrong) = (AtomicU32::new(0), AtomicU32::new(0));
        let body = || {
            let (x, y, b) =
                (crate::gpu::thread_idx_x(), crate::gpu::thread_idx_y(), crate::gpu::block_idx_x());
            let linear = x + 64 * y;
            let i = b * 256 + linear;
            values[i].store(i as u32 + 1, Ordering::Relaxed);
            // Threads (0..40, 0) return before any waits: the first to wait is (40, 0).
            if b % 2 == 0 || (y == 0 && x < 40) {
                return;
            }
            crate::gpu::sync_threads();
            let neighbour = b * 256 + (linear + 1) % 256;
            let from_lane_0 = crate::gpu::warp::shuffle(i as u32, 0);
            let votes = crate::gpu::warp::ballot(true);
            let warp = linear / 32;
            // Warp 1 has lanes 8.. (threads 40..64 of row 0); the others all 32.
            let (first, expected) = if warp == 1 { (40, 0xffff_ff00) } else { (0, !0) };
            // A returned lane 0 leaves the caller its own value.
            let lane_0 = if first > 0 { i } else { i - linear % 32 };
            // Every thread of the block stored its value before the barrier, those that
            // returned included.
            if values[neighbour].load(Ordering::Relaxed) != neighbour as u32 + 1
                || from_lane_0 != lane_0 as u32
                || votes != expected
            {
                wrong.fetch_add(1, Ordering::Relaxed);
            }
            checked.fetch_add(1, Ordering::Relaxed);
        };
        // SAFETY: the slot of a live geometry; the body shares only atomics.
        unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) };
        assert_eq!(wrong.load(Ordering::Relaxed), 0, "{blocks} blocks");
        assert_eq!(checked.load(Ordering::Relaxed), blocks / 2 * (256 - 40), "{blocks} blocks");
        assert_eq!(crate::gpu::block_dim_x(), 1, "the indices are those outside a kernel");
    }
}

/// A system thread that needs stacks for a block at once, where others hold all but a few
/// of MAX_STACKS, waits until they give theirs back, holding none meanwhile.
#[test]
fn stacks_for_blocks_at_once_wait_for_room() {
    use core::sync::atomic::{AtomicBool, Ordering};
    let mut first = InTurn::new(32);
    first.grow(MAX_STACKS - 10);
    let given_back = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let second = scope.spawn(|| {
            let mut second = InTurn::new(32);
            second.grow(100);
            assert!(given_back.load(Ordering::SeqCst), "room before the first gave it back");
            assert_eq!(second.stacks.0.len(), 100);
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        given_back.store(true, Ordering::SeqCst);
        drop(first);
        second.join().unwrap();
    });
}

/// A warp's exchange is clean for each block whose threads wait: block 1's lanes leave it
/// at different operation numbers (the first 16 make a second shuffle after the others have
/// returned), block 2's threads do not wait, and block 3's ballot counts every lane.
#[test]
fn each_block_that_waits_has_clean_warps() {
    use core::sync::atomic::{AtomicU32, Ordering};
    let geometry = Geometry { grid: [4, 1, 1], block: [32, 1, 1], shared: 0 };
    let ballots = AtomicU32::new(0);
    let body = || {
        let (t, b) = (crate::gpu::thread_idx_x(), crate::gpu::block_idx_x());
        match b {
            1 => {
                crate::gpu::warp::shuffle(t as u32, 0);
                if t < 16 {
                    crate::gpu::warp::shuffle(t as u32, 0);
                }
            }
            3 if crate::gpu::warp::ballot(true) == !0 => {
                ballots.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    };
    // SAFETY: the slot of a live geometry; the body shares only an atomic.
    unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) };
    assert_eq!(ballots.load(Ordering::Relaxed), 32);
}

/// A launch from a thread of another pool of the same rayon (as here, where the tests share
/// the library's rayon) runs its blocks on threads of its own, not the library's pool
/// (waiting for which, that thread would run its pool's other tasks): every block runs,
/// none on the library's threads.
#[test]
fn a_launch_from_another_rayon_pool_does_not_wait_for_the_library_pool() {
    use core::sync::atomic::{AtomicU32, Ordering};
    let geometry = Geometry { grid: [256, 1, 1], block: [256, 1, 1], shared: 0 };
    let (ran, on_pool) = (AtomicU32::new(0), AtomicU32::new(0));
    let body = || {
        ran.fetch_add(1, Ordering::Relaxed);
        let name = std::thread::current().name().map(str::to_owned);
        if name.is_some_and(|n| n.starts_with("offload-host-")) {
            on_pool.fetch_add(1, Ordering::Relaxed);
        }
    };
    let programs = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    // SAFETY: the slot of a live geometry; the body shares only atomics.
    programs
        .install(|| unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) });
    assert_eq!(ran.load(Ordering::Relaxed), 256 * 256);
    assert_eq!(on_pool.load(Ordering::Relaxed), 0);
}

/// A grid run inside a kernel's thread, on the same system thread, leaves that thread's
/// indices, memory and warps as it found them.
#[test]
fn a_grid_inside_a_kernel_thread_leaves_its_indices() {
    use core::sync::atomic::{AtomicU32, Ordering};
    let outer = Geometry { grid: [3, 1, 1], block: [64, 1, 1], shared: 32 };
    let inner = Geometry { grid: [2, 1, 1], block: [8, 1, 1], shared: 0 };
    let (wrong, inner_ran) = (AtomicU32::new(0), AtomicU32::new(0));
    let body = || {
        let before = (crate::gpu::imp::index(), crate::gpu::shared_imp::get());
        if crate::gpu::thread_idx_x() == 5 {
            let count = || {
                inner_ran.fetch_add(1, Ordering::Relaxed);
            };
            // SAFETY: the slot of a live geometry; the body shares only an atomic.
            unsafe { run_grid(crate::geometry::geometry_slot(&inner) as u64, count) };
        }
        crate::gpu::sync_threads();
        if (crate::gpu::imp::index(), crate::gpu::shared_imp::get()) != before {
            wrong.fetch_add(1, Ordering::Relaxed);
        }
    };
    // SAFETY: as above.
    unsafe { run_grid(crate::geometry::geometry_slot(&outer) as u64, body) };
    assert_eq!(inner_ran.load(Ordering::Relaxed), 3 * 16);
    assert_eq!(wrong.load(Ordering::Relaxed), 0);
}

/// A kernel's panic in a block on the library's pool comes back to the launch with its
/// message, and leaves the pool's threads outside any kernel: the next launch runs every
/// thread.
#[test]
fn a_panic_on_the_pool_leaves_it_usable() {
    use core::sync::atomic::{AtomicU32, Ordering};
    let geometry = Geometry { grid: [160, 1, 1], block: [256, 1, 1], shared: 0 };
    let panicked = std::panic::catch_unwind(|| {
        let body = || {
            if crate::gpu::block_idx_x() == 100 && crate::gpu::thread_idx_x() == 40 {
                panic!("thread 40 of block 100");
            }
        };
        // SAFETY: the slot of a live geometry; the body shares nothing.
        unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) };
    })
    .unwrap_err();
    let message = panicked
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panicked.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(message.contains("thread 40 of block 100") || message.contains("panicked"));
    let (ran, outside) = (AtomicU32::new(0), AtomicU32::new(0));
    let body = || {
        ran.fetch_add(1, Ordering::Relaxed);
        if crate::gpu::block_dim_x() != 256 {
            outside.fetch_add(1, Ordering::Relaxed);
        }
    };
    // SAFETY: as above; the body shares only atomics.
    unsafe { run_grid(crate::geometry::geometry_slot(&geometry) as u64, body) };
    assert_eq!(ran.load(Ordering::Relaxed), 160 * 256);
    assert_eq!(outside.load(Ordering::Relaxed), 0);
}

/// One warp's `mma` in bf16, fragments loaded from matrices by each lane, against the product
/// computed here: the lanes' fragments go through the warp's exchange as the hardware lays them
/// out (`gpu::mma`'s layout, inverted in the emulation).
#[test]
fn a_warp_multiplies_its_fragments() {
    use crate::bf16;
    use crate::gpu::mma::{self, Accumulator, FragmentA, FragmentB};
    use crate::gpu::{Matrix, MatrixMut};
    let a: Vec<bf16> = (0..16 * 16).map(|i| bf16::from_f32((i % 7) as f32 - 3.0)).collect();
    let b: Vec<bf16> = (0..16 * 8).map(|i| bf16::from_f32((i % 5) as f32 * 0.5)).collect();
    let c = std::sync::Mutex::new(vec![f32::NAN; 16 * 8]);
    let failed = block_at_once(32, || {
        let (am, bm) = (Matrix::new(&a, 16, 16), Matrix::new(&b, 16, 8));
        let mut acc = Accumulator::<bf16>::zero();
        mma::mma(&FragmentA::load(&am, 0, 0), &FragmentB::load(&bm, 0, 0), &mut acc);
        let mut c = c.lock().unwrap();
        acc.store(&mut MatrixMut::new(&mut c, 16, 8), 0, 0);
    });
    assert_eq!(failed, None);
    let c = c.into_inner().unwrap();
    for i in 0..16 {
        for j in 0..8 {
            let want: f32 = (0..16).map(|k| a[i * 16 + k].to_f32() * b[k * 8 + j].to_f32()).sum();
            assert_eq!(c[i * 8 + j], want, "c[{i}][{j}]");
        }
    }
}

/// A warp-wide matrix operation that a lane has returned before is named, not run on what
/// the lane never put in.
#[test]
fn a_matrix_operation_without_every_lane_is_named() {
    use crate::f16;
    use crate::gpu::mma::{self, Accumulator, FragmentA, FragmentB};
    use crate::gpu::{Matrix, thread_idx_x};
    let a = vec![f16::ONE; 16 * 16];
    let failed = block_at_once(32, || {
        if thread_idx_x() == 31 {
            return;
        }
        let m = Matrix::new(&a, 16, 16);
        let mut acc = Accumulator::<f16>::zero();
        mma::mma(&FragmentA::load(&m, 0, 0), &FragmentB::load(&m, 0, 0), &mut acc);
    });
    let message = failed.expect("the product refuses");
    assert!(message.contains("mma::mma ran without every lane of the warp"), "{message}");
    assert!(message.contains("0x80000000"), "lane 31 named: {message}");
}
