//! Copies from device memory into shared memory that run while the threads go on: PTX's
//! `cp.async`, as CUDA's `__pipeline_memcpy_async` or `cuda::memcpy_async`.
//!
//! [`SharedMatrix::copy_async_from`] starts copying a tile of a matrix, the threads of the
//! block sharing its pieces, and [`Shared::copy_async`] one piece of 4, 8 or 16 bytes;
//! [`commit`] closes the group of copies the thread has started since the last one;
//! [`wait(n)`](wait) waits until at most `n` of the thread's groups are still running. A thread
//! sees what its own copies wrote once it has waited for them, and what other threads' copies
//! wrote after they waited and a [`sync_threads`](super::sync_threads). Tiles of a matrix
//! product are double-buffered so:
//!
//! ```text
//! // stage 0 started before the loop; each step starts the next stage, then waits for this one
//! for step in 0..steps {
//!     if step + 1 < steps {
//!         stage[(step + 1) % 2].copy_async_from(&a, row0, (step + 1) * 32, thread, 256);
//!     }
//!     async_copy::commit();
//!     async_copy::wait(1); // all but the group just committed
//!     sync_threads();
//!     // ... compute on stage[step % 2] ...
//!     sync_threads();
//! }
//! ```
//!
//! What shared memory holds while a copy into it runs is unspecified, as for any write of
//! another thread. A copy whose source is not device memory (a kernel's local array), or whose
//! ends are not aligned to its size, is made by the thread at once instead, with the same
//! result. In the host-offload image every copy is made at once.

use super::{Matrix, Shared, SharedMatrix};
use crate::DeviceCopy;
pub(crate) use imp::{can_copy_async, copy_async_unchecked};

impl<T: DeviceCopy> Shared<T> {
    /// Starts copying the first `K` elements of `source` (4, 8 or 16 bytes) to `index` and the
    /// `K - 1` elements after it (see the [module](super::async_copy)). Panics if `source` is
    /// shorter, or the elements run past the memory's end.
    #[inline(always)]
    #[track_caller]
    pub fn copy_async<const K: usize>(&self, index: usize, source: &[T]) {
        const {
            assert!(
                matches!(size_of::<[T; K]>(), 4 | 8 | 16),
                "copy_async moves 4, 8 or 16 bytes: K elements of that size"
            )
        };
        let Some(source) = source.first_chunk::<K>() else {
            panic!("copy_async of {K} elements from a slice of {}", source.len());
        };
        let target = self.block("Shared::copy_async", index, K, [1, K]);
        if imp::can_copy_async(target.cast::<[T; K]>(), source) {
            // SAFETY: in bounds (checked above), aligned and from device memory (tested).
            unsafe { imp::copy_async_unchecked(self, index, source) }
        } else {
            // SAFETY: in bounds (checked above).
            unsafe { copy_now(target.cast::<[T; K]>(), source) }
        }
    }
}

impl<T: DeviceCopy> SharedMatrix<T> {
    /// Starts copying the `rows x cols` tile of `source` whose top left element is
    /// `(row, col)` into this matrix (as many rows and columns as it has), as pieces of `K`
    /// elements (4, 8 or 16 bytes) that the threads calling it share: thread `thread` of
    /// `threads` takes pieces `thread`, `thread + threads`, ... (row by row, `cols / K` pieces a
    /// row). The tile is checked once, not piece by piece, which makes this the fast way to
    /// fill the tiles of a matrix product. Where the pieces' ends are not aligned to their size
    /// (a matrix of an odd width, a tile at an odd column), the thread copies its pieces at
    /// once, as [`Shared::copy_async`] does.
    ///
    /// Panics if the tile runs past `source`, or if the width is not a multiple of `K`.
    #[inline(always)]
    #[track_caller]
    pub fn copy_async_from<const K: usize>(
        &self,
        source: &Matrix<'_, T>,
        row: usize,
        col: usize,
        thread: usize,
        threads: usize,
    ) {
        const {
            assert!(
                matches!(size_of::<[T; K]>(), 4 | 8 | 16),
                "copy_async_from moves pieces of 4, 8 or 16 bytes: K elements of that size"
            )
        };
        let (rows, cols) = (self.rows(), self.cols());
        if !source.holds(row, col, rows, cols) {
            panic!(
                "copy_async_from: a {rows} x {cols} tile at ({row}, {col}) runs past a {} x {} \
                 matrix",
                source.rows(),
                source.cols()
            );
        }
        if cols % K != 0 {
            panic!("copy_async_from: a tile {cols} wide is not made of pieces of {K} elements");
        }
        if rows == 0 || cols == 0 {
            return;
        }
        let pitch = source.cols();
        // SAFETY: `(row, col)` is inside the matrix (the tile is not empty).
        let first = unsafe { source.as_ptr().add(row * pitch + col) };
        let bytes = size_of::<[T; K]>();
        let pieces = Pieces {
            per_row: cols / K,
            pitch,
            stride: self.stride(),
            count: rows * (cols / K),
            thread,
            threads,
        };
        let target = self.memory().as_ptr().wrapping_add(self.index(0, 0));
        // Every piece starts a multiple of its size from the first in both (rows `pitch` and
        // `stride` apart): one test for all.
        let apart = (pitch * size_of::<T>()).is_multiple_of(bytes) && self.rows_aligned(bytes);
        if !(apart && imp::can_copy_async(target.cast::<[T; K]>(), first.cast::<[T; K]>())) {
            // SAFETY: every piece is inside both (checked above: the matrix is inside the
            // memory by its making).
            unsafe { copy_tile_now::<T, K>(target, first, pieces) };
            return;
        }
        let mut piece = thread;
        while piece < pieces.count {
            let (to, from) = pieces.ends::<T, K>(first, piece);
            // SAFETY: `piece < count`: inside the tile, which is inside both the matrix and the
            // memory (checked above); both ends aligned (tested above).
            unsafe { imp::copy_async_unchecked(self.memory(), self.index(0, 0) + to, &*from) };
            piece += threads;
        }
    }
}

/// How a tile's pieces lie and which of them a thread copies.
#[derive(Clone, Copy)]
struct Pieces {
    per_row: usize,
    pitch: usize,
    stride: usize,
    count: usize,
    thread: usize,
    threads: usize,
}

impl Pieces {
    /// Piece `piece`'s place in the memory (elements after the tile's first) and in the
    /// matrix.
    #[inline(always)]
    fn ends<T, const K: usize>(&self, first: *const T, piece: usize) -> (usize, *const [T; K]) {
        let (r, c) = (piece / self.per_row, piece % self.per_row * K);
        (r * self.stride + c, first.wrapping_add(r * self.pitch + c).cast())
    }
}

/// The thread's pieces of a tile copied by the thread at once: out of line, so that a tile
/// that cannot be copied by `cp.async` costs the others nothing.
///
/// # Safety
/// Every piece below `pieces.count` lies inside the memory from `target` and the matrix from
/// `first`.
#[cold]
#[inline(never)]
unsafe fn copy_tile_now<T, const K: usize>(target: *mut T, first: *const T, pieces: Pieces) {
    let mut piece = pieces.thread;
    while piece < pieces.count {
        let (to, from) = pieces.ends::<T, K>(first, piece);
        // SAFETY: the caller's; aligned for the elements, and the bits are plain data.
        unsafe { target.add(to).cast::<[T; K]>().write(from.read()) };
        piece += pieces.threads;
    }
}

/// `*target = *source` by the thread, out of line: kept apart, a copy that `cp.async` cannot
/// make costs the others nothing (inlined, the GPU's compiler would predicate both ways, and
/// every copy would issue the other way's loads and stores too).
///
/// # Safety
/// `target` is valid for a write of an `A`, aligned for its elements.
#[cold]
#[inline(never)]
unsafe fn copy_now<A>(target: *mut A, source: &A) {
    // SAFETY: the caller's; the bits are plain data.
    unsafe { target.write(core::ptr::from_ref(source).read()) }
}

/// Closes the group of the copies this thread has started since the last `commit` (`cp.async.commit_group`).
#[inline(always)]
pub fn commit() {
    imp::commit()
}

/// Waits until at most `pending` of the groups this thread has committed still run
/// (`cp.async.wait_group pending`): `wait(0)` waits for all of them. `pending` is an
/// instruction's constant: from 8 on the wait is for all (as if 0).
#[inline(always)]
pub fn wait(pending: u32) {
    imp::wait(pending)
}

#[cfg(target_arch = "nvptx64")]
mod imp {
    use super::Shared;
    use crate::DeviceCopy;

    unsafe extern "C" {
        /// Whether a generic address is in device (global) memory.
        #[link_name = "llvm.nvvm.isspacep.global"]
        fn is_global(address: *const u8) -> bool;
    }

    /// Whether `cp.async` can copy an `A` from `source` to `target`: both aligned to its size,
    /// `source` in device memory.
    #[inline(always)]
    pub(crate) fn can_copy_async<A>(target: *const A, source: *const A) -> bool {
        let size = size_of::<A>();
        // SAFETY: the intrinsic only looks at the address.
        let global = unsafe { is_global(source.cast()) };
        global && target.addr() % size == 0 && source.addr() % size == 0
    }

    /// `tile[index..] = *source` by `cp.async`, the target as the shared window's 32 bits.
    ///
    /// # Safety
    /// An `A` fits in `tile` from element `index` on; [`can_copy_async`] holds for the two.
    #[inline(always)]
    pub(crate) unsafe fn copy_async_unchecked<T: DeviceCopy, A>(
        tile: &Shared<T>,
        index: usize,
        source: &A,
    ) {
        let (target, from) = (tile.window_address(index), core::ptr::from_ref(source));
        macro_rules! cp_async {
            ($cache:literal, $bytes:literal) => {
                // SAFETY: `target` is `$bytes` bytes of shared memory at a multiple of them,
                // `from` as many of device memory (the caller's); the copy writes the target
                // only, after this returns, which the memory's contract allows.
                unsafe {
                    core::arch::asm!(
                        concat!(
                            "{{ .reg .u64 cpa_g; cvta.to.global.u64 cpa_g, {g}; cp.async.",
                            $cache, ".shared.global [{s}], [cpa_g], ", $bytes, "; }}"
                        ),
                        s = in(reg32) target,
                        g = in(reg64) from,
                        options(nostack),
                    )
                }
            };
        }
        match size_of::<A>() {
            // 16 bytes bypass the L1 cache (`.cg`), as CUDA's own tiles do; smaller copies
            // cannot.
            16 => cp_async!("cg", "16"),
            8 => cp_async!("ca", "8"),
            _ => cp_async!("ca", "4"),
        }
    }

    #[inline(always)]
    pub(super) fn commit() {
        // SAFETY: closes this thread's group of copies; no operands.
        unsafe { core::arch::asm!("cp.async.commit_group;", options(nostack)) }
    }

    #[inline(always)]
    pub(super) fn wait(pending: u32) {
        macro_rules! wait_group {
            ($($n:literal)*) => {
                match pending {
                    // SAFETY: waits for this thread's copies; a memory clobber, so that no
                    // access of shared memory moves above it.
                    $($n => unsafe {
                        core::arch::asm!(concat!("cp.async.wait_group ", $n, ";"), options(nostack))
                    },)*
                    // SAFETY: as above.
                    _ => unsafe { core::arch::asm!("cp.async.wait_all;", options(nostack)) },
                }
            };
        }
        wait_group!(0 1 2 3 4 5 6 7)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use super::Shared;
    use crate::DeviceCopy;

    /// In the host-offload image every copy is made at once.
    #[inline(always)]
    pub(crate) fn can_copy_async<A>(_: *const A, _: *const A) -> bool {
        false
    }

    /// Never called: nothing is copied by `cp.async` here.
    ///
    /// # Safety
    /// An `A` fits in `tile` from element `index` on.
    #[inline(always)]
    pub(crate) unsafe fn copy_async_unchecked<T: DeviceCopy, A>(
        tile: &Shared<T>,
        index: usize,
        source: &A,
    ) {
        // SAFETY: the caller's; the bits are plain data.
        unsafe { tile.as_ptr().add(index).cast::<A>().write(core::ptr::from_ref(source).read()) }
    }

    #[inline(always)]
    pub(super) fn commit() {}

    #[inline(always)]
    pub(super) fn wait(_: u32) {}
}
