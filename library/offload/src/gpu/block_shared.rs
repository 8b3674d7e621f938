//! Shared memory: the bytes a launch gives each block (`launch!(k, grid, block, shared =
//! BYTES, (...))`), which the threads of the block read and write together: on a GPU the
//! multiprocessor's own memory, much faster than the device's.
//!
//! ```text
//! // A block's sum of `values`, by halves: each thread adds a pair, then waits for the others.
//! #[offload::kernel]
//! pub fn block_sums(values: &[f32], sums: &mut [f32]) {
//!     use offload::gpu::*;
//!     let partial = shared::<f32>();           // launched with shared = block * 4 bytes
//!     let t = thread_idx_x();
//!     partial.write(t, values.get(global_id_x()).copied().unwrap_or(0.0));
//!     let mut half = block_dim_x() / 2;
//!     while half > 0 {
//!         sync_threads();
//!         if t < half {
//!             partial.write(t, partial.read(t) + partial.read(t + half));
//!         }
//!         half /= 2;
//!     }
//!     if t == 0 {
//!         sums[block_idx_x()] = partial.read(0);
//!     }
//! }
//! ```
//!
//! The memory holds what the block's threads wrote; what a thread reads before any wrote it is
//! unspecified on a GPU (zero in the host-offload image). In the host-offload image each block
//! has its own memory, and from the first [`sync_threads`](super::sync_threads) (or warp
//! operation) on its threads
//! run at once, each a coroutine of the system thread that runs the block, so that the barrier
//! is a real one.

use core::marker::PhantomData;

use super::atomic::{AtomicAdd, AtomicOrd};
use crate::DeviceCopy;

/// The calling block's shared memory, as `T`s: as many as fit in the launch's bytes. A handle
/// every thread of the block may copy; reads and writes go through it (the memory is shared, so
/// no thread holds a reference into it).
#[derive(Debug)]
pub struct Shared<T> {
    base: *mut T,
    len: usize,
    _data: PhantomData<T>,
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<T> {}

/// The calling block's shared memory as `T`s (see the module's documentation). Its length is
/// the launch's shared bytes over `size_of::<T>()`: 0 for a launch without shared memory.
#[inline(always)]
pub fn shared<T: DeviceCopy>() -> Shared<T> {
    const {
        assert!(align_of::<T>() <= 16, "shared memory is aligned to 16 bytes");
        assert!(size_of::<T>() > 0, "shared memory of zero-sized data holds nothing");
    };
    let (base, bytes) = imp::memory();
    Shared { base: base.cast(), len: bytes / size_of::<T>(), _data: PhantomData }
}

/// The first `N` `T`s of the calling block's shared memory, as CUDA's `__shared__ T a[N]`: the
/// launch must give at least `N * size_of::<T>()` bytes (it panics otherwise). The handle's
/// length is the constant `N`, so the compiler drops an access's bounds check wherever it can
/// bound the index (by the launch bounds of the kernel, say: `thread_idx_x() < 32` with
/// `launch_bounds = (32, 8)`).
#[inline(always)]
#[track_caller]
pub fn shared_array<T: DeviceCopy, const N: usize>() -> Shared<T> {
    let memory = shared::<T>();
    assert!(
        N <= memory.len,
        "shared_array of {N} elements in a launch with room for {} (give the launch shared = {} \
         bytes or more)",
        memory.len,
        N * size_of::<T>()
    );
    Shared { len: N, ..memory }
}

impl<T: DeviceCopy> Shared<T> {
    /// How many `T`s the block's shared memory holds.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the launch gave the block no room for a `T`.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `T` at `index`. Panics past the end, as slice indexing does.
    #[inline(always)]
    #[track_caller]
    pub fn read(&self, index: usize) -> T {
        // SAFETY: in bounds and aligned (`element`), and every bit pattern is a `T`
        // (`DeviceCopy`).
        unsafe { self.element(index).read() }
    }

    /// Writes `value` at `index`. Panics past the end, as slice indexing does.
    #[inline(always)]
    #[track_caller]
    pub fn write(&self, index: usize, value: T) {
        // SAFETY: in bounds and aligned (`element`).
        unsafe { self.element(index).write(value) }
    }

    /// The `K` `T`s from `index` on, with one bounds check for them all: on a GPU a vector
    /// load where the compiler sees the address aligned (4 `f32`s at a multiple of 16 bytes from
    /// the memory's start are one `ld.shared.v4.f32`). Panics if they run past the end.
    #[inline(always)]
    #[track_caller]
    pub fn read_array<const K: usize>(&self, index: usize) -> [T; K] {
        // SAFETY: `K` elements in bounds from `index` (`elements`), each a `T` (`DeviceCopy`).
        let first = self.elements::<K>(index);
        core::array::from_fn(|k| unsafe { first.add(k).read() })
    }

    /// Writes `values` at `index` and the `K - 1` elements after it, with one bounds check (a
    /// vector store where the address is aligned, as for [`read_array`](Self::read_array)).
    /// Panics if they run past the end.
    #[inline(always)]
    #[track_caller]
    pub fn write_array<const K: usize>(&self, index: usize, values: [T; K]) {
        let first = self.elements::<K>(index);
        // Each element moved out by index, so that the array stays in registers.
        let values = core::mem::ManuallyDrop::new(values);
        for k in 0..K {
            // SAFETY: `K` elements in bounds from `index` (`elements`); each value is read
            // once, and the array is not dropped.
            unsafe { first.add(k).write(core::ptr::read(&values[k])) };
        }
    }

    /// The first of the `K` `T`s from `index`, all in bounds (panics otherwise).
    #[inline(always)]
    #[track_caller]
    fn elements<const K: usize>(&self, index: usize) -> *mut T {
        assert!(
            index <= self.len && K <= self.len - index,
            "shared memory elements {index}..{} out of range (length {})",
            index.saturating_add(K),
            self.len
        );
        // SAFETY: `index <= len`.
        unsafe { self.base.add(index) }
    }

    /// The first of a `rows x cols` block of elements from `index` on, its rows `stride`
    /// elements apart: all of it in bounds (panics otherwise, naming `what`).
    #[inline(always)]
    #[track_caller]
    pub(crate) fn block(
        &self,
        what: &str,
        index: usize,
        stride: usize,
        [rows, cols]: [usize; 2],
    ) -> *mut T {
        let end = (rows - 1).checked_mul(stride).and_then(|s| s.checked_add(index));
        let end = end.and_then(|s| s.checked_add(cols));
        if !matches!(end, Some(end) if end <= self.len) {
            panic!(
                "{what}: a {rows} x {cols} block at shared index {index} with rows {stride} \
                 apart runs past the memory's {} elements",
                self.len
            );
        }
        // SAFETY: `index < end <= len`.
        unsafe { self.base.add(index) }
    }

    /// The `T` at `index`: in bounds (panics past the end, as slice indexing does) and aligned
    /// (the memory is 16-aligned, `T` at most that).
    #[inline(always)]
    #[track_caller]
    fn element(&self, index: usize) -> *mut T {
        assert!(index < self.len, "shared memory index {index} out of range (length {})", self.len);
        // SAFETY: `index` is within the memory's `len` elements.
        unsafe { self.base.add(index) }
    }

    /// The memory's first `T`, for code that indexes it itself.
    #[inline(always)]
    pub fn as_ptr(&self) -> *mut T {
        self.base
    }

    /// The address of element `index` in the shared state space's own 32 bits (what PTX's
    /// `ldmatrix` and `cp.async` take): the window's start converted once, the rest integer
    /// arithmetic the compiler folds into the instructions' offsets.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) fn window_address(&self, index: usize) -> u32 {
        imp::window(self.base.cast()).wrapping_add((index * size_of::<T>()) as u32)
    }
}

impl<T: DeviceCopy> Shared<T> {
    /// Whether the memory starts at a multiple of `bytes` in the shared window (always in the
    /// host-offload image, which has no window): the device stage aligns it to 1024.
    #[inline(always)]
    pub(crate) fn window_aligned(&self, bytes: usize) -> bool {
        #[cfg(target_arch = "nvptx64")]
        return (self.window_address(0) as usize).is_multiple_of(bytes);
        #[cfg(not(target_arch = "nvptx64"))]
        return bytes > 0;
    }
}

impl<T: DeviceCopy + AtomicAdd> Shared<T> {
    /// Adds `value` to the `T` at `index` atomically, as [`atomic::fetch_add`](super::atomic::fetch_add)
    /// does to device data: other threads of the block may add to it at the same time (a
    /// block's histogram). Returns the value before. Panics past the end.
    #[inline(always)]
    #[track_caller]
    pub fn fetch_add(&self, index: usize, value: T) -> T {
        // SAFETY: in bounds and aligned (`element`); the block's threads reach it only through
        // this handle.
        unsafe { T::__fetch_add(self.element(index), value) }
    }
}

impl<T: DeviceCopy + AtomicOrd> Shared<T> {
    /// Sets the `T` at `index` to the larger of it and `value` atomically; returns the value
    /// before. Panics past the end.
    #[inline(always)]
    #[track_caller]
    pub fn fetch_max(&self, index: usize, value: T) -> T {
        // SAFETY: as in `fetch_add`.
        unsafe { T::__fetch_max(self.element(index), value) }
    }

    /// Sets the `T` at `index` to the smaller of it and `value` atomically; returns the value
    /// before. Panics past the end.
    #[inline(always)]
    #[track_caller]
    pub fn fetch_min(&self, index: usize, value: T) -> T {
        // SAFETY: as in `fetch_add`.
        unsafe { T::__fetch_min(self.element(index), value) }
    }
}

#[cfg(target_arch = "nvptx64")]
mod imp {
    unsafe extern "C" {
        /// The generic address of the block's dynamic shared memory. The device stage of the
        /// build defines it (`addrspacecast` of the `addrspace(3)` window `__offload_shared`),
        /// so that LLVM gives every access through the handle the shared state space
        /// (`ld.shared`, `st.shared`, `atom.shared`); a generic access checks the window at run
        /// time, and a generic atomic on shared memory is several times slower. It reads no
        /// memory (`ffi_const`): calls merge, and accesses move freely around them.
        #[unsafe(ffi_const)]
        #[link_name = "__offload_shared_memory"]
        fn shared_memory() -> *mut u8;
    }
    const _: () =
        assert!(offload_abi::same(offload_abi::nvptx::SHARED_MEMORY_FN, "__offload_shared_memory"));

    /// A generic address of shared memory as the shared window's 32 bits.
    #[inline(always)]
    pub(super) fn window(address: *mut u8) -> u32 {
        let window: u32;
        // SAFETY: a register conversion (`address` is in the window: the memory's start).
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 sw_a; cvta.to.shared.u64 sw_a, {p}; cvt.u32.u64 {w}, sw_a; }}",
                p = in(reg64) address,
                w = out(reg32) window,
                options(pure, nomem, nostack),
            )
        };
        window
    }

    /// The memory's generic address and its size in bytes.
    #[inline(always)]
    pub(super) fn memory() -> (*mut u8, usize) {
        let bytes: u32;
        // SAFETY: reads a special register; no memory access.
        unsafe {
            core::arch::asm!(
                "mov.u32 {bytes}, %dynamic_smem_size;",
                bytes = out(reg32) bytes,
                options(pure, nomem, nostack),
            )
        };
        // SAFETY: the device stage defines it; it reads and writes nothing.
        (unsafe { shared_memory() }, bytes as usize)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod imp {
    use std::cell::Cell;

    thread_local! {
        /// The shared memory of the block the emulated thread belongs to, and its size.
        static MEMORY: Cell<(*mut u8, usize)> = const { Cell::new((core::ptr::null_mut(), 0)) };
    }

    pub(crate) fn set(base: *mut u8, bytes: usize) {
        MEMORY.with(|m| m.set((base, bytes)));
    }

    /// The memory as it is set.
    pub(crate) fn get() -> (*mut u8, usize) {
        MEMORY.with(Cell::get)
    }

    // Inlined into the kernels' crates, as the indices' reads are.
    #[inline(always)]
    pub(super) fn memory() -> (*mut u8, usize) {
        let (base, bytes) = MEMORY.with(Cell::get);
        // No memory: a dangling, aligned address for the empty handle.
        if base.is_null() { (core::ptr::dangling_mut::<u128>().cast(), 0) } else { (base, bytes) }
    }
}
