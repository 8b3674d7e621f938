//! Support for the code `#[offload::kernel]` and `#[derive(DeviceCopy)]` generate. Not a public
//! API.

use core::ptr::NonNull;

#[cfg(not(offload_device))]
pub use crate::device::LaunchDevice;
pub use crate::device_copy::assert_no_padding;
pub use crate::geometry::{Geometry, geometry_slot};
pub use crate::intrinsics::arg_kind;
#[cfg(not(offload_device))]
pub use crate::launch::{
    check_devices, check_launch_bounds, check_mapped, geometry, marker_size, status,
};
#[cfg(not(offload_device))]
pub use crate::rt::require_device;
#[cfg(not(offload_device))]
pub use crate::stream::{
    CudaImage, ModuleSource, Slot, cuda_module_source, launch_async, launch_sync, pending_launches,
    synchronize_pending,
};

/// The sum of `sizes`, in a constant: a struct's size when its fields' sizes are these and it
/// has no padding (`#[derive(DeviceCopy)]`'s check).
pub const fn total_size(sizes: &[usize]) -> usize {
    let (mut total, mut i) = (0, 0);
    while i < sizes.len() {
        total += sizes[i];
        i += 1;
    }
    total
}

// The declarations' names are literals (a `link_name` must be), checked against the contract.
const _: () =
    assert!(offload_abi::same(offload_abi::intrinsics::CUDA_IMAGE, "__rust_offload_cuda_image"));
const _: () = assert!(offload_abi::same(
    offload_abi::intrinsics::CUDA_IMAGE_LEN,
    "__rust_offload_cuda_image_len"
));
const _: () =
    assert!(offload_abi::same(offload_abi::intrinsics::CUDA_PTX, "__rust_offload_cuda_ptx"));

#[cfg(not(offload_device))]
unsafe extern "C" {
    /// The embedded cubin, defined by the offload lowering (null when the program has none).
    #[link_name = "__rust_offload_cuda_image"]
    static CUDA_IMAGE: *const u8;
    /// Its length in bytes (0 when the program has none).
    #[link_name = "__rust_offload_cuda_image_len"]
    static CUDA_IMAGE_LEN: i64;
    /// The PTX the cubin was assembled from, NUL-terminated, defined by the offload lowering
    /// (null when the program has none).
    #[link_name = "__rust_offload_cuda_ptx"]
    static CUDA_PTX: *const core::ffi::c_char;
}

/// The embedded cubin and its PTX, for the library's own CUDA module (`launch_async`,
/// `launch_sync`). Only code the launch macros generate calls it, so a program that launches
/// nothing never references the symbols.
#[cfg(not(offload_device))]
#[inline(always)]
pub fn cuda_image() -> CudaImage {
    // SAFETY: the lowering defines the three as constants of these types.
    unsafe { CudaImage { ptr: CUDA_IMAGE, len: CUDA_IMAGE_LEN, ptx: CUDA_PTX } }
}

/// The runtime's loader: a constructor the link stage emits calls it before every other, with
/// the names of the runtime functions the program calls and the table its calls go through
/// (see `rt::load_runtime`).
///
/// # Safety
/// `names` must point to `n` C strings and `table` to `table_bytes` writable bytes (at least `n`
/// pointers) that nothing else uses: the loader may make them read-only once they are filled.
#[cfg(not(offload_device))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __offload_load_runtime(
    names: *const *const core::ffi::c_char,
    table: *mut *const core::ffi::c_void,
    n: usize,
    table_bytes: usize,
) {
    // SAFETY: per the caller.
    unsafe { crate::rt::load_runtime(names, table, n, table_bytes) }
}

/// Whether the runtime's table was made read-only once filled (for tests).
#[cfg(not(offload_device))]
pub fn runtime_table_sealed() -> bool {
    crate::rt::runtime_table_sealed()
}

/// Called by the registration constructor the offload lowering emits, before a program that
/// embeds an NVIDIA image registers it, with that image: see `rt::before_cuda_register`.
///
/// # Safety
/// `image` must point to the `len` bytes of the embedded cubin.
#[cfg(not(offload_device))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __offload_before_cuda_register(image: *const u8, len: i64) {
    // SAFETY: per the caller.
    unsafe { crate::rt::before_cuda_register(image, len) };
}

/// A by-value parameter from its 8-byte slot.
///
/// # Safety
/// `slot` must hold the bits of a `T` as `KernelArg<Val<T>>` wrote them.
#[inline(always)]
pub unsafe fn value<T: Copy>(slot: u64) -> T {
    // SAFETY: `T` fits in the slot (checked when the launch was compiled) and is plain data.
    unsafe { core::mem::transmute_copy::<u64, T>(&slot) }
}

/// The data behind a kernel's `&T`/`&mut T` parameter, rebuilt from its address slot: sized
/// data. Implemented for every sized type. The host launcher asks for it of each such parameter
/// (`sized_data`) and the device entry rebuilds the parameter through it, each at the
/// parameter's type, so that unsized data is refused there with this message rather than deep
/// inside a device image's build.
#[diagnostic::on_unimplemented(
    message = "a kernel's `&T` or `&mut T` parameter must be sized data, or a slice written out as `&[T]`: here `T` is `{Self}`",
    label = "`{Self}` is unsized here",
    note = "a slice parameter gets a length slot only where its type is written `&[T]` or `&mut [T]` in the kernel's signature: write the slice type out instead of a type alias; other unsized data (`str`, `dyn Trait`) cannot go to the device"
)]
pub trait SizedData {
    /// A `&T` parameter from its address slot.
    ///
    /// # Safety
    /// `address` must be the device address of a mapped, initialised `T`.
    unsafe fn reference<'a>(address: *mut u8) -> &'a Self;

    /// A `&mut T` parameter from its address slot.
    ///
    /// # Safety
    /// As [`SizedData::reference`]; the data is shared by the kernel's threads, as in CUDA.
    unsafe fn reference_mut<'a>(address: *mut u8) -> &'a mut Self;
}

impl<T> SizedData for T {
    #[inline(always)]
    unsafe fn reference<'a>(address: *mut u8) -> &'a T {
        unsafe { &*data_address::<T>(address) }
    }

    #[inline(always)]
    unsafe fn reference_mut<'a>(address: *mut u8) -> &'a mut T {
        unsafe { &mut *data_address::<T>(address) }
    }
}

/// Zero-sized data is not mapped (its address slot may be null): any aligned address is it.
#[inline(always)]
fn data_address<T>(address: *mut u8) -> *mut T {
    if size_of::<T>() == 0 { NonNull::<T>::dangling().as_ptr() } else { address.cast::<T>() }
}

/// Asks for [`SizedData`] of `T` in the host build, which has no device entry.
#[inline(always)]
pub const fn sized_data<T: ?Sized + SizedData>() {}

/// A `&[T]` parameter from its address and length slots.
///
/// # Safety
/// `address` must be the device address of `len` initialised elements (or anything for 0).
#[inline(always)]
pub unsafe fn slice<'a, T>(address: *mut u8, len: u64) -> &'a [T] {
    // SAFETY: per the caller, and `elements`.
    unsafe { core::slice::from_raw_parts(elements::<T>(address, len).as_ptr(), len as usize) }
}

/// A `&mut [T]` parameter from its address and length slots.
///
/// # Safety
/// As [`slice`]; the data is shared by the kernel's threads, as in CUDA.
#[inline(always)]
pub unsafe fn slice_mut<'a, T>(address: *mut u8, len: u64) -> &'a mut [T] {
    // SAFETY: as in `slice`.
    unsafe { core::slice::from_raw_parts_mut(elements::<T>(address, len).as_ptr(), len as usize) }
}

/// The first element of a slice parameter: its address slot, or, for an empty slice or
/// zero-sized elements (which are not mapped, so the slot may be null), a dangling, aligned
/// address.
///
/// One select of non-null addresses, rather than an early return of `&[]`: the compiler then
/// knows that whatever `get(i)` finds (`i < len`, so `len > 0`) is the slot's address and not
/// null, and a kernel's bounds checks are its only branch. With the early return, every
/// `get` also compared the address against null on nvptx (0.4% of a saxpy's time on an H200).
///
/// # Safety
/// `address` must not be null when `len > 0` and `T` is not zero-sized: the runtime maps data
/// to non-null device addresses.
#[inline(always)]
unsafe fn elements<T>(address: *mut u8, len: u64) -> NonNull<T> {
    if len == 0 || size_of::<T>() == 0 {
        NonNull::dangling()
    } else {
        // SAFETY: per the caller.
        unsafe { NonNull::new_unchecked(address.cast::<T>()) }
    }
}

/// Runs a kernel body for every (block, thread) of the launch, x fastest as CUDA numbers them:
/// the host-offload plugin calls a kernel once for the whole grid.
///
/// Each block's threads run one after another until one of them waits for the others
/// (`sync_threads` or a warp operation); from there the block's threads run at once, each a
/// coroutine on the system thread that runs the block, so that barriers and warp operations
/// hold (see [`InTurn::run`]). Each block finds this out for itself. Blocks are independent, as
/// on a GPU: a grid of enough work runs them on all the machine's cores
/// (`OFFLOAD_HOST_THREADS`, see `host_workers`).
///
/// # Safety
/// `geometry` must be the launcher's geometry slot (`geometry_slot`), alive for the call, and
/// `body` must be callable from several system threads at once (the kernel's entry point: it
/// rebuilds the kernel's arguments from its slots, which the threads share as a GPU's do).
#[cfg(not(target_arch = "nvptx64"))]
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
#[cfg(not(target_arch = "nvptx64"))]
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

/// What one system thread needs to run blocks in turn: a stack for the coroutine that runs
/// blocks' threads one after another, more for the threads of a block that wait for each
/// other, and the exchanges of the block's warps.
#[cfg(not(target_arch = "nvptx64"))]
struct InTurn {
    /// The stack of the coroutine of the threads in turn, and those for threads at once.
    stacks: Stacks,
    /// How many of `stacks` are for threads at once: counted in [`HELD`].
    counted: usize,
    warps: Vec<Warp>,
    /// Whether a block's threads have run at once since the warps were cleared.
    used: bool,
}

/// Stacks for threads at once that the system threads running blocks hold, over the process
/// (`InTurn::counted` of each), kept within [`MAX_STACKS`]: with the room they wait for.
#[cfg(not(target_arch = "nvptx64"))]
static HELD: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

#[cfg(not(target_arch = "nvptx64"))]
impl Drop for InTurn {
    fn drop(&mut self) {
        let mut held = HELD.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        *held -= self.counted;
        HELD.1.notify_all();
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl InTurn {
    fn new(members: usize) -> InTurn {
        // Where a kernel thread overflows its stack, the report runs on this one.
        crate::host_stack::give_altstack();
        InTurn {
            stacks: Stacks::take(1),
            counted: 0,
            warps: vec![Warp::default(); members.div_ceil(WARP_SIZE)],
            used: false,
        }
    }

    /// Makes `stacks` (without the one in use by the threads in turn) `need` long, within
    /// [`MAX_STACKS`] over the process. Where there is no room, this thread gives back the
    /// stacks it holds and waits for room for all it needs: every thread that holds stacks
    /// either runs a block, which ends, or waits holding none, so the room comes.
    fn grow(&mut self, need: usize) {
        let more = need.saturating_sub(self.stacks.0.len());
        if more == 0 {
            return;
        }
        let mut held = HELD.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if *held + more > MAX_STACKS {
            *held -= self.counted;
            self.counted = 0;
            HELD.1.notify_all();
            while *held > 0 && *held + need > MAX_STACKS {
                held = HELD.1.wait(held).unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            drop(core::mem::replace(&mut self.stacks, Stacks(Vec::new())));
        }
        let more = need - self.stacks.0.len();
        *held += more;
        self.counted += more;
        drop(held);
        self.stacks.0.append(&mut Stacks::take(more).0);
    }

    /// Runs the blocks `take` hands out, of `block` threads each, after `enter` has set each
    /// one's index and memory, and says whether the threads of any of them waited for each
    /// other.
    ///
    /// The threads run one after another in CUDA's order, block after block, all in one
    /// coroutine, as plain calls. The first thread of a block that waits (at `sync_threads` or
    /// a warp operation) suspends that coroutine; the threads of its block before it have
    /// ended (a GPU's barrier does not wait for threads that have exited). That thread goes on
    /// in the coroutine it was in, and the block's later threads each in a coroutine of its
    /// own, all at once ([`run_block_at_once`]); the next blocks start in turn in a new
    /// coroutine.
    fn run(
        &mut self,
        block: [usize; 3],
        take: &dyn Fn() -> Option<usize>,
        enter: impl Fn(usize),
        body: impl Fn(),
    ) -> bool {
        let mut any = false;
        loop {
            if self.used {
                self.warps.fill(Warp::default());
                self.used = false;
            }
            // A thread that waits at a warp operation has put in its warp's exchange first.
            crate::gpu::warp_imp::set_warps(self.warps.as_mut_ptr(), self.warps.len());
            let waited = core::cell::Cell::new(false);
            let in_turn = || {
                while let Some(i) = take() {
                    enter(i);
                    for z in 0..block[2] {
                        for y in 0..block[1] {
                            for x in 0..block[0] {
                                crate::gpu::imp::set_thread([x, y, z]);
                                body();
                                // The thread that waited has gone on alone from its wait: the
                                // rest of its block have run as coroutines of their own.
                                if waited.get() {
                                    return;
                                }
                            }
                        }
                    }
                }
            };
            let stack = self.stacks.0.pop().expect("a stack for the blocks' threads in turn");
            let mut thread = start_thread(stack, &in_turn);
            let result = thread.resume(());
            crate::gpu::imp::set_yielder(core::ptr::null());
            let CoroutineResult::Yield(wait) = result else {
                // Every block handed out has run.
                self.stacks.0.push(thread.into_stack());
                crate::gpu::warp_imp::set_warps(core::ptr::null_mut(), 0);
                return any;
            };
            waited.set(true);
            (self.used, any) = (true, true);
            let linear = crate::gpu::imp::linear_thread();
            let members = block.iter().product::<usize>();
            // A stack for each thread after it.
            self.grow(members - linear - 1);
            let rest = block_threads(block).enumerate().skip(linear);
            // `thread` borrows `in_turn`, which outlives it here: the block's threads all end
            // in `run_block_at_once`, or unwind with its panic.
            run_block_at_once(&mut self.stacks, &mut self.warps, rest, Some((thread, wait)), &body);
        }
    }
}

/// The threads of a block of `block` threads, x fastest.
#[cfg(not(target_arch = "nvptx64"))]
fn block_threads(block: [usize; 3]) -> impl Iterator<Item = [usize; 3]> {
    (0..block[2])
        .flat_map(move |z| (0..block[1]).flat_map(move |y| (0..block[0]).map(move |x| [x, y, z])))
}

/// Runs its closure when dropped.
#[cfg(not(target_arch = "nvptx64"))]
struct OnDrop<F: FnMut()>(F);

#[cfg(not(target_arch = "nvptx64"))]
impl<F: FnMut()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        (self.0)()
    }
}

#[cfg(not(target_arch = "nvptx64"))]
use corosensei::CoroutineResult;

#[cfg(not(target_arch = "nvptx64"))]
use crate::gpu::imp::Wait;
#[cfg(not(target_arch = "nvptx64"))]
use crate::gpu::warp::WARP_SIZE;
#[cfg(not(target_arch = "nvptx64"))]
use crate::gpu::warp_imp::Warp;
#[cfg(not(target_arch = "nvptx64"))]
use crate::host_stack::Stack;

/// Stacks kept between launches, at most this many.
#[cfg(not(target_arch = "nvptx64"))]
const KEPT_STACKS: usize = 2048;

/// Stacks for threads of blocks at once mapped at the most, over the process (a stack for each
/// thread of each block whose threads run at once): each stack is two of the process's memory
/// mappings (its guard page), of which Linux allows 65530 by default.
#[cfg(not(target_arch = "nvptx64"))]
const MAX_STACKS: usize = 8192;

/// Stacks for the coroutines of one system thread's blocks, taken from those kept between
/// launches (mapping a stack is a system call) and given back when dropped.
#[cfg(not(target_arch = "nvptx64"))]
struct Stacks(Vec<Stack>);

#[cfg(not(target_arch = "nvptx64"))]
static KEPT: std::sync::Mutex<Vec<Stack>> = std::sync::Mutex::new(Vec::new());

#[cfg(not(target_arch = "nvptx64"))]
impl Stacks {
    fn take(n: usize) -> Stacks {
        let mut kept = KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let from = kept.len().saturating_sub(n);
        let mut stacks = kept.split_off(from);
        drop(kept);
        while stacks.len() < n {
            match Stack::new() {
                Ok(stack) => stacks.push(stack),
                Err(e) => panic!(
                    "offload: the host-offload image could not map a stack for a thread of a \
                     block ({e}): launch smaller blocks, or set OFFLOAD_HOST_THREADS or \
                     OFFLOAD_HOST_STACK lower"
                ),
            }
        }
        Stacks(stacks)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl Drop for Stacks {
    fn drop(&mut self) {
        let mut kept = KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let room = KEPT_STACKS.saturating_sub(kept.len());
        kept.extend(self.0.drain(..).take(room));
    }
}

/// Emulated threads of blocks that run in turn, or one emulated thread of a block whose threads
/// run at once: a coroutine on the system thread that runs the block, which waits ([`Wait`]) by
/// suspending.
#[cfg(not(target_arch = "nvptx64"))]
type Thread = corosensei::Coroutine<(), Wait, (), Stack>;

/// A thread that runs `body` on `stack`, not started.
#[cfg(not(target_arch = "nvptx64"))]
fn start_thread(stack: Stack, body: &impl Fn()) -> Thread {
    let start = move |yielder: &crate::gpu::imp::Yielder, ()| {
        crate::gpu::imp::set_yielder(yielder);
        body();
    };
    // SAFETY: what `start` borrows (`body`) outlives the thread: every caller drives it to its
    // end, or drops it (unwinding it), before `body` goes.
    unsafe { corosensei::Coroutine::with_stack_unchecked(stack, start) }
}

/// Runs one block whose threads must run at once (one of them waits for the others in
/// `sync_threads` or a warp operation): each thread is a coroutine on this system thread, with
/// the index of the block set and its own set before each resume. `threads` are the block's threads not yet ended, with their linear indices;
/// `first`, where given, is the first of them, started already and waiting.
///
/// The threads are resumed in turn, in CUDA's order; each runs until it waits ([`Wait`]) or
/// ends. Then those that can go on are let go: the threads at `sync_threads` once every thread
/// of the block that has not ended is there (as PTX's `bar.sync`, a thread that returned early
/// does not hold the others), and the threads of a warp at a warp operation once every thread
/// of that warp that has not ended is at it. Threads that wait where nothing can let them go
/// (some of a warp at a warp operation while others are at `sync_threads`, which a GPU would
/// not finish either) end the launch with a panic naming them.
#[cfg(not(target_arch = "nvptx64"))]
fn run_block_at_once(
    stacks: &mut Stacks,
    warps: &mut [Warp],
    threads: impl Iterator<Item = (usize, [usize; 3])>,
    first: Option<(Thread, Wait)>,
    body: impl Fn(),
) {
    /// A thread of the block: its index, its warp, where it waits (`None`: it may run).
    struct Member {
        index: [usize; 3],
        warp: usize,
        waits: Option<Wait>,
        thread: Thread,
    }

    // A first thread started already has put in its warp's exchange.
    if first.is_none() {
        warps.fill(Warp::default());
    }
    crate::gpu::warp_imp::set_warps(warps.as_mut_ptr(), warps.len());
    // Cleared however this returns: a thread's panic comes out of its `resume`.
    let _reset = OnDrop(|| {
        crate::gpu::imp::set_yielder(core::ptr::null());
        crate::gpu::warp_imp::set_warps(core::ptr::null_mut(), 0);
    });
    let body = &body;
    let mut first = first;
    let mut running: Vec<Member> = threads
        .map(|(linear, index)| {
            let (thread, waits) = match first.take() {
                Some((thread, wait)) => (thread, Some(wait)),
                None => {
                    let stack = stacks.0.pop().expect("a stack for every thread of the block");
                    (start_thread(stack, body), None)
                }
            };
            Member { index, warp: linear / WARP_SIZE, waits, thread }
        })
        .collect();
    let mut ended = Vec::with_capacity(running.len());
    let mut warp_waits = vec![(0usize, 0usize); warps.len()];
    while !running.is_empty() {
        for member in running.iter_mut().filter(|m| m.waits.is_none()) {
            crate::gpu::imp::set_thread(member.index);
            let result = member.thread.resume(());
            crate::gpu::imp::set_yielder(core::ptr::null());
            if let CoroutineResult::Yield(wait) = result {
                member.waits = Some(wait);
            }
        }
        // Those that ended are out, and their stacks kept for the next block.
        ended.extend(running.extract_if(.., |m| m.thread.done()).map(|m| m.thread));
        // Who may go on: a warp all at a warp operation, or the block all at its barrier.
        // (threads that have not ended, those at a warp operation) of each warp. The lanes of
        // a warp let go together are at the same operation: each was let go from the one
        // before with the others, and a lane that waits at sync_threads holds its warp.
        warp_waits.fill((0, 0));
        for m in &running {
            warp_waits[m.warp].0 += 1;
            warp_waits[m.warp].1 += usize::from(m.waits == Some(Wait::Warp));
        }
        let block_ready = running.iter().all(|m| m.waits == Some(Wait::Block));
        let mut released = false;
        for m in &mut running {
            let (members, waiting) = warp_waits[m.warp];
            let go = match m.waits {
                Some(Wait::Block) => block_ready,
                Some(Wait::Warp) => waiting == members,
                None => false,
            };
            if go {
                m.waits = None;
                released = true;
            }
        }
        if !released && !running.is_empty() {
            // The first few of the threads that wait at `wait`, and how many more.
            let at = |wait: Wait| {
                let waiting: Vec<_> = running.iter().filter(|m| m.waits == Some(wait)).collect();
                let named = waiting.iter().take(8).map(|m| format!("{:?}", m.index));
                let mut list = named.collect::<Vec<_>>().join(" ");
                if waiting.len() > 8 {
                    list += &format!(" and {} more", waiting.len() - 8);
                }
                list
            };
            panic!(
                "offload: in the host-offload image the threads of a block wait where none can \
                 go on: at sync_threads {}; at a warp operation {} (every thread of a warp must \
                 reach each warp operation, and every thread of a block each sync_threads)",
                at(Wait::Block),
                at(Wait::Warp)
            );
        }
    }
    stacks.0.extend(ended.into_iter().map(Thread::into_stack));
}

/// `OFFLOAD_HOST_THREADS`, read once: `None` where unset (or not a positive number, with a
/// warning).
#[cfg(not(target_arch = "nvptx64"))]
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
#[cfg(not(target_arch = "nvptx64"))]
const PARALLEL_THREADS: usize = 1 << 15;

/// How many system threads run a grid's blocks in the host-offload image: `OFFLOAD_HOST_THREADS`
/// if set (1 runs every grid on the calling thread, in order), else the machine's cores for a
/// grid of several blocks and at least [`PARALLEL_THREADS`] threads, else 1.
#[cfg(not(target_arch = "nvptx64"))]
fn host_workers(blocks: usize, threads: usize) -> usize {
    let workers = if chosen_host_threads().is_none() && threads < PARALLEL_THREADS {
        1
    } else {
        host_threads()
    };
    workers.min(blocks).max(1)
}

/// System threads for grids: `OFFLOAD_HOST_THREADS` if set, else the machine's cores.
#[cfg(not(target_arch = "nvptx64"))]
fn host_threads() -> usize {
    chosen_host_threads()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use std::cell::RefCell;

    use super::*;

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
            let mut sum = t as i64;
            for offset in [16, 8, 4, 2, 1] {
                sum += warp::shuffle_down(sum, offset);
            }
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
                let (x, y, b) = (
                    crate::gpu::thread_idx_x(),
                    crate::gpu::thread_idx_y(),
                    crate::gpu::block_idx_x(),
                );
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
        programs.install(|| unsafe {
            run_grid(crate::geometry::geometry_slot(&geometry) as u64, body)
        });
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
}
