use super::block::{InTurn, OnDrop};
use super::stack::MAX_STACKS;
use crate::geometry::Geometry;

/// Runs a kernel body for every (block, thread) of the launch, x fastest as CUDA numbers them:
/// the host-offload plugin calls a kernel once for the whole grid.
///
/// Each block's threads run one after another until one of them waits for the others
/// (`sync_threads` or a warp operation); from there the block's threads run at once, each a
/// coroutine on the system thread that runs the block, so that barriers and warp operations
/// hold (see `InTurn::run`). Each block finds this out for itself. Blocks are independent, as
/// on a GPU: a grid of enough work runs them on all the machine's cores
/// (`OFFLOAD_HOST_THREADS`, see `host_workers`).
///
/// # Safety
/// `geometry` must be the launcher's geometry slot (`geometry_slot`), alive for the call, and
/// `body` must be callable from several system threads at once (the kernel's entry point: it
/// rebuilds the kernel's arguments from its slots, which the threads share as a GPU's do).
pub unsafe fn run_grid(geometry: u64, body: impl Fn()) {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The kernel's body, called from several system threads at once: they share its data as
    /// the threads of a GPU do.
    struct Body<'a, F>(&'a F);
    // SAFETY: the caller's contract.
    unsafe impl<F> Sync for Body<'_, F> {}
    impl<F: Fn()> Body<'_, F> {
        // A method, so that a closure captures the whole `Body` (not its field).
        #[inline(always)]
        fn run(&self) {
            (self.0)()
        }
    }

    // SAFETY: the caller's contract.
    let Geometry { grid, block, shared } = unsafe { crate::geometry::geometry_in(geometry) };
    let (grid, block) = (grid.map(|d| d as usize), block.map(|d| d as usize));
    let shared = shared as usize;
    let body = Body(&body);
    let blocks = grid.iter().product::<usize>();
    let members = block.iter().product::<usize>();
    // The block of linear index `i`.
    let block_at = |i: usize| [i % grid[0], i / grid[0] % grid[1], i / (grid[0] * grid[1])];
    // However a system thread leaves the grid (a kernel's panic unwinding included), its
    // thread-locals are as they were before: no pointer to the launch's memory, warps or
    // coroutines stays, and a grid run inside a kernel's thread on the same system thread
    // (rayon's work stealing, where the library shares rayon with the kernel) leaves that
    // thread's indices as it found them.
    let reset = || {
        let shared = crate::gpu::shared_imp::get();
        let warps = crate::gpu::warp_imp::warps();
        let yielder = crate::gpu::imp::yielder();
        let index = crate::gpu::imp::index();
        OnDrop(move || {
            crate::gpu::shared_imp::set(shared.0, shared.1);
            crate::gpu::warp_imp::set_warps(warps.0, warps.1);
            crate::gpu::imp::set_yielder(yielder);
            crate::gpu::imp::set(index);
        })
    };
    // One system thread's share of the grid: the blocks `take` hands it, in turn, each with
    // its memory zeroed (a launch with shared memory). Says whether threads of one waited.
    let run_blocks = |in_turn: &mut InTurn, take: &dyn Fn() -> Option<usize>| -> bool {
        let _reset = reset();
        let mut memory = vec![0u128; shared.div_ceil(16)];
        let bytes = memory.len() * 16;
        let base = memory.as_mut_ptr().cast::<u8>();
        if shared != 0 {
            crate::gpu::shared_imp::set(base, shared);
        }
        let enter = |i: usize| {
            if shared != 0 {
                // SAFETY: no thread of another block runs: the memory is `bytes` long.
                unsafe { core::ptr::write_bytes(base, 0, bytes) };
            }
            crate::gpu::imp::set([[0; 3], block_at(i), block, grid]);
        };
        let waited = in_turn.run(block, take, enter, || body.run());
        drop(memory);
        waited
    };
    // Block 0 first, alone on this thread: whether its threads wait sizes the workers below.
    let mut in_turn = InTurn::new(members);
    let first = core::cell::Cell::new((blocks > 0).then_some(0));
    let waited = run_blocks(&mut in_turn, &|| first.take());
    let next = AtomicUsize::new(1);
    let take = || Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < blocks);
    let mut workers = host_workers(blocks, blocks * members);
    if waited || shared != 0 {
        // Each system thread will likely map a stack per thread of its block. (Where neither
        // says so, later blocks' threads may wait all the same: `InTurn::grow` then keeps the
        // stacks mapped at once within MAX_STACKS.)
        workers = workers.min((MAX_STACKS / members).max(1));
    }
    if workers <= 1 {
        run_blocks(&mut in_turn, &take);
        return;
    }
    drop(in_turn);
    // A thread of another pool of the same rayon that waited for this one would run that
    // pool's other tasks meanwhile, a launch among them. (An image links its own rayon, to
    // which the program's pools are outside threads that just wait; the library's unit tests
    // share one.) Such a launch, a forked child (whose pool has no threads) and a process
    // without the pool start threads of their own instead.
    match host_pool().filter(|_| rayon::current_thread_index().is_none()) {
        Some(pool) => pool.scope(|scope| {
            // More jobs than the pool's threads would find no blocks left.
            for _ in 0..workers.min(pool.current_num_threads()) {
                scope.spawn(|_| {
                    run_blocks(&mut InTurn::new(members), &take);
                });
            }
        }),
        None => std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| run_blocks(&mut InTurn::new(members), &take));
            }
        }),
    }
}

/// The system threads that run grids' blocks beside the launching thread: as many as
/// `host_workers` may ask for, started with the first grid that wants them and kept (starting
/// two threads cost 85 us a launch on a two-core machine, more than a grid of 16384 saxpy
/// threads takes on one). `None` where they cannot be started, and in a child process forked
/// after they were (its copy of the pool has no threads).
fn host_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<(rayon::ThreadPool, u32)>> = std::sync::OnceLock::new();
    let (pool, process) = POOL
        .get_or_init(|| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(host_threads())
                .thread_name(|i| format!("offload-host-{i}"))
                .build();
            match pool {
                Ok(pool) => Some((pool, std::process::id())),
                Err(e) => {
                    eprintln!(
                        "offload: warning: no pool of threads for the host-offload image's \
                         grids ({e}); each starts threads of its own"
                    );
                    None
                }
            }
        })
        .as_ref()?;
    (*process == std::process::id()).then_some(pool)
}

/// `OFFLOAD_HOST_THREADS`, read once: `None` where unset (or not a positive number, with a
/// warning).
fn chosen_host_threads() -> Option<usize> {
    static CHOSEN: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let value = std::env::var("OFFLOAD_HOST_THREADS").ok()?;
        match value.trim().parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                eprintln!(
                    "offload: warning: OFFLOAD_HOST_THREADS={value:?} is not a positive number of threads; using the machine's cores"
                );
                None
            }
        }
    })
}

/// Kernel threads in a grid below which the host-offload image runs it on the calling thread
/// alone: handing blocks to the pool's threads and waiting for them (35-40 us on a two-core
/// machine) costs more than they save (a saxpy of 16384 threads: 85 us on two threads, 50-60 us
/// on one).
const PARALLEL_THREADS: usize = 1 << 15;

/// How many system threads run a grid's blocks in the host-offload image: `OFFLOAD_HOST_THREADS`
/// if set (1 runs every grid on the calling thread, in order), else the machine's cores for a
/// grid of several blocks and at least [`PARALLEL_THREADS`] threads, else 1.
fn host_workers(blocks: usize, threads: usize) -> usize {
    let workers = if chosen_host_threads().is_none() && threads < PARALLEL_THREADS {
        1
    } else {
        host_threads()
    };
    workers.min(blocks).max(1)
}

/// System threads for grids: `OFFLOAD_HOST_THREADS` if set, else the machine's cores.
fn host_threads() -> usize {
    chosen_host_threads()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
