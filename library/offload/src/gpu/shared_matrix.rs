//! Row-major matrices in a block's shared memory: the tiles of a matrix product.
//!
//! [`Shared::matrix`] makes a `rows x cols` view whose rows lie `stride` elements apart (a
//! stride above `cols` pads the rows, against bank conflicts), checked once against the memory.
//! Accesses through the view then check only their place in it, which for the fixed positions
//! of a kernel's fragments (`FragmentA::load_shared(&a, 16 * i, k)`, constants and warp
//! indices) the compiler checks once, outside the kernel's loops, or not at all:
//!
//! ```text
//! let tiles = offload::gpu::shared::<bf16>();
//! let a = tiles.matrix(0, 128, 32, 40);        // 128 x 32, rows padded to 40
//! let b = tiles.matrix(128 * 40, 32, 128, 136); // 32 x 128 after it
//! a.copy_async_from(&a_global, row0, k0, thread, 256);
//! let mine = a.block(64 * (warp / 4), 0, 64, 32); // this warp's rows
//! ```

use super::Shared;
use crate::DeviceCopy;

/// A `rows x cols` row-major matrix in shared memory, its rows `stride` elements apart (see
/// the module's documentation). A handle, as [`Shared`] is: every thread of the block may copy it.
#[derive(Debug)]
pub struct SharedMatrix<T> {
    memory: Shared<T>,
    first: usize,
    rows: usize,
    cols: usize,
    stride: usize,
}

impl<T> Clone for SharedMatrix<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedMatrix<T> {}

impl<T: DeviceCopy> Shared<T> {
    /// The `rows x cols` matrix whose first element is at `index`, its rows `stride` elements
    /// apart. Panics if it runs past the memory, or `stride < cols`.
    #[inline(always)]
    #[track_caller]
    pub fn matrix(&self, index: usize, rows: usize, cols: usize, stride: usize) -> SharedMatrix<T> {
        if stride < cols {
            panic!("a shared matrix {cols} wide cannot have rows {stride} apart");
        }
        if rows > 0 && cols > 0 {
            self.block("Shared::matrix", index, stride, [rows, cols]);
        }
        SharedMatrix { memory: *self, first: index, rows, cols, stride }
    }
}

impl<T: DeviceCopy> SharedMatrix<T> {
    /// Rows of the matrix.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the matrix.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Elements from one row's start to the next's.
    #[inline(always)]
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The `rows x cols` block of the matrix whose top left element is `(row, col)`, as a
    /// matrix of its own (a warp's part of a block's tile): positions in it are constants
    /// more often, which the compiler checks and adds to an address at no cost. Panics if it
    /// runs past the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn block(&self, row: usize, col: usize, rows: usize, cols: usize) -> SharedMatrix<T> {
        self.check("SharedMatrix::block", row, col, [rows, cols]);
        SharedMatrix { first: self.index(row, col), rows, cols, ..*self }
    }

    /// Element `(r, c)`. Panics outside the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn read(&self, r: usize, c: usize) -> T {
        self.check("SharedMatrix::read", r, c, [1, 1]);
        // SAFETY: inside the matrix, which is inside the memory (`Shared::matrix`).
        unsafe { self.memory.as_ptr().add(self.index(r, c)).read() }
    }

    /// Writes element `(r, c)`. Panics outside the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn write(&self, r: usize, c: usize, value: T) {
        self.check("SharedMatrix::write", r, c, [1, 1]);
        // SAFETY: as in `read`.
        unsafe { self.memory.as_ptr().add(self.index(r, c)).write(value) }
    }

    /// The memory's index of element `(r, c)`.
    #[inline(always)]
    pub(crate) fn index(&self, r: usize, c: usize) -> usize {
        self.first + self.offset(r, c)
    }

    /// How many elements element `(r, c)` lies after the first: kept apart from a block's
    /// position where a lane's part of the block is added to it (as `ldmatrix` lanes' rows
    /// are), so that the compiler sees the lane's part as one term and the block's positions
    /// as constants from one address.
    #[inline(always)]
    pub(crate) fn offset(&self, r: usize, c: usize) -> usize {
        r * self.stride + c
    }

    /// The shared window's 32-bit address of the element `offset` elements after `(r, c)`,
    /// computed in 32 bits (the window is smaller), so that the compiler folds a constant
    /// position into the instruction's offset.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) fn window_address(&self, r: usize, c: usize, offset: usize) -> u32 {
        let (r, c, offset) = (r as u32, c as u32, offset as u32);
        let index = (self.first as u32)
            .wrapping_add(r.wrapping_mul(self.stride as u32))
            .wrapping_add(c)
            .wrapping_add(offset);
        self.memory.window_address(0).wrapping_add(index.wrapping_mul(size_of::<T>() as u32))
    }

    /// The memory the matrix lies in.
    #[inline(always)]
    pub(crate) fn memory(&self) -> &Shared<T> {
        &self.memory
    }

    /// Panics, naming `what`, unless the `rows x cols` block at `(r, c)` lies inside the
    /// matrix: then every element of it is in bounds of the memory.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn check(&self, what: &str, r: usize, c: usize, [rows, cols]: [usize; 2]) {
        let inside =
            r <= self.rows && rows <= self.rows - r && c <= self.cols && cols <= self.cols - c;
        if !inside {
            panic!(
                "{what}: a {rows} x {cols} block at ({r}, {c}) runs past a {} x {} shared matrix",
                self.rows, self.cols
            );
        }
    }

    /// Whether every row of the matrix starts at a multiple of `bytes` (a power of two up to
    /// 16) in the memory, which starts at a multiple of 16.
    #[inline(always)]
    pub(crate) fn rows_aligned(&self, bytes: usize) -> bool {
        (self.first * size_of::<T>()).is_multiple_of(bytes)
            && (self.stride * size_of::<T>()).is_multiple_of(bytes)
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use crate::gpu::shared;
    use crate::gpu::shared_imp::set;

    #[test]
    fn a_view_reads_and_writes_its_rows() {
        let mut memory = [0u32; 64];
        set(memory.as_mut_ptr().cast(), 256);
        let m = shared::<u32>().matrix(4, 3, 5, 8);
        m.write(2, 4, 7);
        assert_eq!(m.read(2, 4), 7);
        assert_eq!((m.rows(), m.cols(), m.stride()), (3, 5, 8));
        set(core::ptr::null_mut(), 0);
        assert_eq!(memory[4 + 2 * 8 + 4], 7);
    }

    #[test]
    #[should_panic(expected = "runs past a 3 x 5 shared matrix")]
    fn an_element_outside_the_view_panics() {
        let mut memory = [0u32; 64];
        set(memory.as_mut_ptr().cast(), 256);
        let m = shared::<u32>().matrix(0, 3, 5, 8);
        m.read(0, 5);
    }

    #[test]
    #[should_panic(expected = "runs past the memory's 64 elements")]
    fn a_view_past_the_memory_panics() {
        let mut memory = [0u32; 64];
        set(memory.as_mut_ptr().cast(), 256);
        shared::<u32>().matrix(8, 8, 8, 8);
    }
}
