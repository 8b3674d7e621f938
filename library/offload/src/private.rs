//! Support for the code `#[offload::kernel]` and `#[derive(DeviceCopy)]` generate. Not a public
//! API.

use core::ptr::NonNull;

pub use crate::device_copy::assert_no_padding;
pub use crate::geometry::{Geometry, geometry_slot};
pub use crate::intrinsics::arg_kind;
#[cfg(not(offload_device))]
pub use crate::launch::{check_devices, check_mapped, geometry, marker_size, status};
#[cfg(not(offload_device))]
pub use crate::rt::require_device;
#[cfg(not(offload_device))]
pub use crate::stream::{
    CudaImage, ModuleSource, Slot, cuda_module_source, launch_async, launch_sync, pending_launches,
    synchronize_pending,
};

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
/// A block's threads run one after another, or, in a launch with shared memory, at once (one
/// system thread each, the block's memory and a barrier between them), so that `sync_threads`
/// holds. Blocks are independent, as on a GPU: a grid of enough work runs them on all the
/// machine's cores (`OFFLOAD_HOST_THREADS`, see [`host_workers`]).
#[cfg(not(target_arch = "nvptx64"))]
pub fn run_grid(geometry: u64, body: impl Fn()) {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The kernel's body, called from several system threads at once: they share its data as
    /// the threads of a GPU do.
    struct Body<'a, F>(&'a F);
    // SAFETY: see above; the body only rebuilds the kernel's arguments from its slots.
    unsafe impl<F> Sync for Body<'_, F> {}
    impl<F: Fn()> Body<'_, F> {
        // A method, so that a closure captures the whole `Body` (not its field).
        #[inline(always)]
        fn run(&self) {
            (self.0)()
        }
    }

    // SAFETY: the slot is the launcher's `geometry_slot`, and the host plugin runs the kernel
    // within the launcher's call.
    let Geometry { grid, block, shared } = unsafe { crate::geometry::geometry_in(geometry) };
    let (grid, block) = (grid.map(|d| d as usize), block.map(|d| d as usize));
    let body = Body(&body);
    let blocks = grid.iter().product::<usize>();
    // The block of linear index `i`, and the threads of a block, x fastest.
    let block_at = |i: usize| [i % grid[0], i / grid[0] % grid[1], i / (grid[0] * grid[1])];
    let threads = || {
        (0..block[2])
            .flat_map(|z| (0..block[1]).flat_map(move |y| (0..block[0]).map(move |x| [x, y, z])))
    };
    // Nested loops rather than `threads()`: this is the hot path of every kernel on the CPU,
    // and the iterator's flat maps made a saxpy launch about 1.5x slower.
    let one_after_another = |i: usize| {
        crate::gpu::imp::set([[0; 3], block_at(i), block, grid]);
        for z in 0..block[2] {
            for y in 0..block[1] {
                for x in 0..block[0] {
                    crate::gpu::imp::set_thread([x, y, z]);
                    body.run();
                }
            }
        }
    };
    if shared == 0 {
        let workers = host_workers(blocks, blocks * block.iter().product::<usize>());
        if workers <= 1 {
            (0..blocks).for_each(one_after_another);
        } else {
            let next = AtomicUsize::new(0);
            std::thread::scope(|scope| {
                for _ in 0..workers {
                    scope.spawn(|| {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= blocks {
                                break;
                            }
                            one_after_another(i);
                        }
                    });
                }
            });
        }
    } else {
        /// The block's shared memory, handed to its threads.
        #[derive(Clone, Copy)]
        struct Memory(*mut u8);
        // SAFETY: the threads share it as a GPU block's threads do; it outlives them (scoped).
        unsafe impl Send for Memory {}
        impl Memory {
            // A method, so that a closure captures the whole `Memory` (not its `*mut` field).
            fn base(self) -> *mut u8 {
                self.0
            }
        }
        // One system thread per thread of a block, started once and run through every block
        // in turn: between two blocks, one of them clears the memory and readies the barrier.
        let members = block.iter().product::<usize>();
        let mut memory = vec![0u128; (shared as usize).div_ceil(16)];
        let bytes = memory.len() * 16;
        let base = Memory(memory.as_mut_ptr().cast::<u8>());
        let barrier = BlockBarrier::new(members);
        let turn = std::sync::Barrier::new(members);
        std::thread::scope(|scope| {
            for t in threads() {
                let (body, barrier, turn, block_at) = (&body, &barrier, &turn, &block_at);
                std::thread::Builder::new()
                    .stack_size(1 << 20)
                    .spawn_scoped(scope, move || {
                        crate::gpu::shared_imp::set(base.base(), shared as usize);
                        crate::gpu::imp::set_barrier(barrier);
                        for i in 0..blocks {
                            crate::gpu::imp::set([t, block_at(i), block, grid]);
                            {
                                // Leaves the barrier when the thread ends its block, however.
                                let _leave = barrier.member();
                                body.run();
                            }
                            if turn.wait().is_leader() {
                                // SAFETY: every thread of the block has ended it and waits at
                                // `turn` below; the memory is `bytes` long.
                                unsafe { core::ptr::write_bytes(base.base(), 0, bytes) };
                                barrier.reset(members);
                            }
                            turn.wait();
                        }
                    })
                    .expect("offload: the host-offload image could not start a thread of a block");
            }
        });
        drop(memory);
    }
    crate::gpu::imp::set(crate::gpu::imp::OUTSIDE);
}

/// The barrier of a block whose threads run at once in the host-offload image: as PTX's
/// `bar.sync`, it waits for the block's threads that have not exited, so that a thread that
/// returns early (`if i >= n { return; }` before a `sync_threads`) does not hold the others.
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) struct BlockBarrier {
    /// Threads not yet exited, threads waiting, and the round (which changes on release).
    state: std::sync::Mutex<(usize, usize, u64)>,
    released: std::sync::Condvar,
}

#[cfg(not(target_arch = "nvptx64"))]
impl BlockBarrier {
    fn new(threads: usize) -> Self {
        BlockBarrier { state: std::sync::Mutex::new((threads, 0, 0)), released: Default::default() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (usize, usize, u64)> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until every thread of the block that has not exited waits here too.
    pub(crate) fn wait(&self) {
        let mut state = self.lock();
        state.1 += 1;
        if state.1 == state.0 {
            Self::release(&mut state);
            self.released.notify_all();
            return;
        }
        let round = state.2;
        while state.2 == round {
            state = self.released.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// A thread of the block: it leaves the barrier when dropped (the thread has exited).
    fn member(&self) -> impl Drop + '_ {
        struct Member<'a>(&'a BlockBarrier);
        impl Drop for Member<'_> {
            fn drop(&mut self) {
                let mut state = self.0.lock();
                state.0 -= 1;
                if state.1 > 0 && state.1 == state.0 {
                    BlockBarrier::release(&mut state);
                    self.0.released.notify_all();
                }
            }
        }
        Member(self)
    }

    /// Readies the barrier for the next block's `threads` (none of the last block's waits).
    fn reset(&self, threads: usize) {
        let mut state = self.lock();
        state.0 = threads;
        state.1 = 0;
    }

    fn release(state: &mut (usize, usize, u64)) {
        state.1 = 0;
        state.2 = state.2.wrapping_add(1);
    }
}

/// Kernel threads in a grid below which the host-offload image runs it on the calling thread
/// alone: starting system threads costs more than the work.
#[cfg(not(target_arch = "nvptx64"))]
const PARALLEL_THREADS: usize = 1 << 14;

/// How many system threads run a grid's blocks in the host-offload image: `OFFLOAD_HOST_THREADS`
/// if set (1 runs every grid on the calling thread, in order), else the machine's cores for a
/// grid of several blocks and at least [`PARALLEL_THREADS`] threads, else 1.
#[cfg(not(target_arch = "nvptx64"))]
fn host_workers(blocks: usize, threads: usize) -> usize {
    static CHOSEN: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let chosen = *CHOSEN.get_or_init(|| {
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
    });
    let workers = match chosen {
        Some(n) => n,
        None if threads < PARALLEL_THREADS => 1,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    workers.min(blocks).max(1)
}
