//! A warpgroup's operand tile in shared memory, in the layout `wgmma` reads with its 128-byte
//! swizzle: the tile's columns cut into panels 128 bytes wide, each panel its rows one after
//! the other, and in each row the 16-byte pieces permuted by the row (piece `q` of row `r` at
//! `q ^ (r % 8)`), so that the eight rows an instruction reads at once fall in distinct banks.

use crate::DeviceCopy;
use crate::gpu::{Matrix, Shared};

/// Bytes of a panel's row: the swizzle's width.
const ROW: usize = 128;
/// Bytes of a piece the swizzle moves.
const PIECE: usize = 16;
/// Rows of the swizzle's pattern; `ROW * ATOM` bytes is where a tile must start.
const ATOM: usize = 8;

/// A `rows x cols` matrix (or a block of one) in shared memory in the layout of
/// [`wgmma::mma`](super::mma)'s operands (see the [module](super)). A handle: every thread of
/// the block may copy it.
#[derive(Debug)]
pub struct Tile<T> {
    memory: Shared<T>,
    /// The tile's first element in the memory.
    first: usize,
    /// Rows of the whole tile: a panel's height.
    height: usize,
    /// The block's place and size in the whole tile.
    row: usize,
    col: usize,
    rows: usize,
    cols: usize,
}

impl<T> Clone for Tile<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Tile<T> {}

impl<T: DeviceCopy> Tile<T> {
    /// The `rows x cols` tile whose storage starts at element `index` of `memory` and takes
    /// `rows * cols` elements. Panics unless it fits in the memory, `index` is a multiple of
    /// 1024 bytes, `rows` of 8 and `cols` of 128 bytes.
    #[inline(always)]
    #[track_caller]
    pub fn new(memory: &Shared<T>, index: usize, rows: usize, cols: usize) -> Self {
        let size = size_of::<T>();
        let fits = index.checked_add(rows * cols).is_some_and(|end| end <= memory.len());
        if !fits {
            panic!(
                "wgmma::Tile: a {rows} x {cols} tile at shared index {index} runs past the \
                 memory's {} elements",
                memory.len()
            );
        }
        let aligned =
            (index * size).is_multiple_of(ROW * ATOM) && memory.window_aligned(ROW * ATOM);
        if !(aligned && rows.is_multiple_of(ATOM) && (cols * size).is_multiple_of(ROW)) {
            panic!(
                "wgmma::Tile: a {rows} x {cols} tile at shared index {index} must start at a \
                 multiple of 1024 bytes, have a multiple of 8 rows and rows of a multiple of 128 \
                 bytes"
            );
        }
        Tile { memory: *memory, first: index, height: rows, row: 0, col: 0, rows, cols }
    }

    /// Rows of the tile (of the block).
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the tile (of the block).
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The `rows x cols` block whose top left element is `(row, col)`: a warpgroup's rows of
    /// A, or a k-step's rows of B. Panics if it runs past the tile.
    #[inline(always)]
    #[track_caller]
    pub fn block(&self, row: usize, col: usize, rows: usize, cols: usize) -> Self {
        self.check("wgmma::Tile::block", row, col, [rows, cols]);
        Tile { row: self.row + row, col: self.col + col, rows, cols, ..*self }
    }

    /// Element `(r, c)` of the block. Panics outside it.
    #[inline(always)]
    #[track_caller]
    pub fn read(&self, r: usize, c: usize) -> T {
        self.check("wgmma::Tile::read", r, c, [1, 1]);
        // SAFETY: inside the block, so inside the tile, which is inside the memory (`new`).
        unsafe { self.memory.as_ptr().add(self.index(self.row + r, self.col + c)).read() }
    }

    /// Writes element `(r, c)` of the block. Panics outside it.
    #[inline(always)]
    #[track_caller]
    pub fn write(&self, r: usize, c: usize, value: T) {
        self.check("wgmma::Tile::write", r, c, [1, 1]);
        // SAFETY: as in `read`.
        unsafe { self.memory.as_ptr().add(self.index(self.row + r, self.col + c)).write(value) }
    }

    /// Starts copying the `rows x cols` tile of `source` whose top left element is
    /// `(row, col)` into this block, as 16-byte pieces of `K` elements that the threads calling
    /// it share (thread `thread` of `threads` takes pieces `thread`, `thread + threads`, ...),
    /// as [`SharedMatrix::copy_async_from`](crate::gpu::SharedMatrix::copy_async_from) does
    /// for plain rows: [`async_copy::commit`](crate::gpu::async_copy::commit) and
    /// [`wait`](crate::gpu::async_copy::wait) apply. Panics if the tile runs past `source`, or
    /// the block does not start at a multiple of `K` columns.
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
        const { assert!(size_of::<[T; K]>() == PIECE, "a tile is filled by 16-byte pieces") };
        let (rows, cols) = (self.rows, self.cols);
        if !source.holds(row, col, rows, cols) {
            panic!(
                "wgmma::Tile::copy_async_from: a {rows} x {cols} tile at ({row}, {col}) runs \
                 past a {} x {} matrix",
                source.rows(),
                source.cols()
            );
        }
        if !(self.col.is_multiple_of(K) && cols.is_multiple_of(K)) {
            panic!(
                "wgmma::Tile::copy_async_from: a block at column {} and {cols} wide is not made \
                 of pieces of {K} elements",
                self.col
            );
        }
        let (per_row, pitch) = (cols / K, source.cols());
        // Thread `thread` copies piece `thread % per_row` of rows `thread / per_row`,
        // `+ threads / per_row`, ...: where the step is a multiple of the swizzle's 8 rows (a
        // block's threads over a tile), the piece's place in a row is the same in each, and
        // every piece starts 16-byte aligned in the matrix where the first does (rows a
        // multiple of 16 bytes apart): one test for all, and the loop adds constants.
        let (piece, step) = (thread % per_row, threads / per_row);
        let (first_row, c) = (thread / per_row, piece * K);
        if rows == 0 || first_row >= rows {
            return;
        }
        // SAFETY: `(row + first_row, col + c)` is inside the matrix (checked above).
        let mut from = unsafe { source.as_ptr().add((row + first_row) * pitch + col + c) };
        let mut to = self.index(self.row + first_row, self.col + c);
        let target = self.memory.as_ptr().wrapping_add(to).cast::<[T; K]>();
        let regular = threads.is_multiple_of(per_row)
            && step.is_multiple_of(ATOM)
            && (pitch * size_of::<T>()).is_multiple_of(PIECE)
            && crate::gpu::async_copy::can_copy_async(target, from.cast::<[T; K]>());
        if !regular {
            self.copy_pieces::<K>(source, row, col, thread, threads);
            return;
        }
        let mut r = first_row;
        loop {
            // SAFETY: the piece is inside the block, so inside the memory, and a whole piece
            // of the swizzle; `from` is inside the matrix, in device memory and aligned (all
            // tested above).
            unsafe {
                crate::gpu::async_copy::copy_async_unchecked(
                    &self.memory,
                    to,
                    &*from.cast::<[T; K]>(),
                )
            };
            r += step;
            if r >= rows {
                break;
            }
            from = from.wrapping_add(step * pitch);
            to += step * (ROW / size_of::<T>());
        }
    }

    /// [`copy_async_from`](Self::copy_async_from)'s pieces, one by one, each copied by
    /// `cp.async` where it can be, for any number of threads: out of line, and the tile by
    /// value, so that the fast path neither carries its code nor puts the tile in memory.
    #[cold]
    #[inline(never)]
    fn copy_pieces<const K: usize>(
        self,
        source: &Matrix<'_, T>,
        row: usize,
        col: usize,
        thread: usize,
        threads: usize,
    ) {
        let (per_row, pitch) = (self.cols / K, source.cols());
        let mut piece = thread;
        while piece < self.rows * per_row {
            let (r, c) = (piece / per_row, piece % per_row * K);
            // SAFETY: as in `copy_async_from`, whose checks hold.
            let from =
                unsafe { &*source.as_ptr().add((row + r) * pitch + col + c).cast::<[T; K]>() };
            let to = self.index(self.row + r, self.col + c);
            let target = self.memory.as_ptr().wrapping_add(to).cast::<[T; K]>();
            if crate::gpu::async_copy::can_copy_async(target, from) {
                // SAFETY: a whole piece of the swizzle inside the memory; `from` in device
                // memory and aligned (tested).
                unsafe { crate::gpu::async_copy::copy_async_unchecked(&self.memory, to, from) };
            } else {
                // SAFETY: as above; the bits are plain data.
                unsafe { target.write(core::ptr::from_ref(from).read()) };
            }
            piece += threads;
        }
    }

    /// The memory's index of element `(r, c)` of the whole tile.
    #[inline(always)]
    fn index(&self, r: usize, c: usize) -> usize {
        let size = size_of::<T>();
        let (per_row, per_piece) = (ROW / size, PIECE / size);
        let (panel, within) = (c / per_row, c % per_row);
        let piece = (within / per_piece) ^ (r % ATOM);
        self.first + (panel * self.height + r) * per_row + piece * per_piece + within % per_piece
    }

    /// Whether the block starts at a k-step of A (a multiple of 32 bytes across, so that
    /// every step of 16 two-byte columns stays in a row of a panel) and at a pattern of the
    /// swizzle.
    #[inline(always)]
    pub(super) fn k_aligned(&self) -> bool {
        (self.col * size_of::<T>()).is_multiple_of(2 * PIECE) && self.row.is_multiple_of(ATOM)
    }

    /// Whether the block starts at a panel and at a pattern of the swizzle.
    #[inline(always)]
    pub(super) fn n_aligned(&self) -> bool {
        (self.col * size_of::<T>()).is_multiple_of(ROW) && self.row.is_multiple_of(ATOM)
    }

    /// The shared window's byte address of the whole tile's element `(r, c)`, where `c` is
    /// a panel's first column or within the first piece of a row (no swizzle applies to it).
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
    #[inline(always)]
    fn address(&self, r: usize, c: usize) -> u32 {
        let size = size_of::<T>();
        let (panel, within) = (c / (ROW / size), c % (ROW / size));
        let bytes = ((panel * self.height + r) * ROW + within * size) as u32;
        self.memory.window_address(self.first).wrapping_add(bytes)
    }

    /// The matrix descriptor of the block's columns from `k` on as A (rows along M, K-major):
    /// 8-row patterns `ROW * ATOM` bytes apart, the 128-byte swizzle (the leading offset is
    /// unused: a step stays within a row).
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
    #[inline(always)]
    pub(super) fn descriptor_k_major(&self, k: usize) -> u64 {
        descriptor(self.address(self.row, self.col + k), PIECE, ROW * ATOM)
    }

    /// The matrix descriptor of the block's rows from `k` on as B (rows along K, N-major):
    /// panels `height` rows apart along N, 8-row patterns `ROW * ATOM` bytes apart along K,
    /// the 128-byte swizzle.
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
    #[inline(always)]
    pub(super) fn descriptor_mn_major(&self, k: usize) -> u64 {
        descriptor(self.address(self.row + k, self.col), self.height * ROW, ROW * ATOM)
    }

    /// Panics, naming `what`, unless the `rows x cols` block at `(r, c)` is inside this one.
    #[inline(always)]
    #[track_caller]
    fn check(&self, what: &str, r: usize, c: usize, [rows, cols]: [usize; 2]) {
        let inside =
            r <= self.rows && rows <= self.rows - r && c <= self.cols && cols <= self.cols - c;
        if !inside {
            panic!(
                "{what}: a {rows} x {cols} block at ({r}, {c}) runs past a {} x {} tile",
                self.rows, self.cols
            );
        }
    }
}

/// PTX's shared-memory matrix descriptor: the start address, the leading and the stride
/// dimension's byte offsets (each in 16-byte units, 14 bits), and the 128-byte swizzle (mode 1
/// in bits 62-63).
#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
#[inline(always)]
fn descriptor(address: u32, leading: usize, stride: usize) -> u64 {
    let field = |bytes: u64| (bytes >> 4) & 0x3fff;
    field(u64::from(address)) | field(leading as u64) << 16 | field(stride as u64) << 32 | 1 << 62
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::gpu::shared;
    use crate::gpu::shared_imp::set;

    #[test]
    fn every_element_has_its_own_place_and_pieces_stay_whole() {
        let mut memory = [0u64; 2048];
        set(memory.as_mut_ptr().cast(), 16384);
        let tile = Tile::new(&shared::<u16>(), 512, 16, 128);
        let mut seen = vec![0u8; 16 * 128];
        for r in 0..16 {
            for c in 0..128 {
                let i = tile.index(r, c) - 512;
                seen[i] += 1;
                // A piece of 8 elements stays together, in order.
                assert_eq!(tile.index(r, c) % 8, c % 8);
                // Panels of 64 columns, each 16 rows of 64.
                assert_eq!(i / (16 * 64), c / 64);
                assert_eq!(i % (16 * 64) / 64, r);
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
        // Row 3's first piece is its fourth.
        assert_eq!(tile.index(3, 0) - 512, 3 * 64 + 3 * 8);
        tile.block(8, 64, 8, 64).write(1, 2, 7);
        assert_eq!(tile.read(9, 66), 7);
        set(core::ptr::null_mut(), 0);
    }

    #[test]
    #[should_panic(expected = "must start at a multiple of 1024 bytes")]
    fn a_tile_off_the_pattern_panics() {
        let mut memory = [0u64; 2048];
        set(memory.as_mut_ptr().cast(), 16384);
        Tile::new(&shared::<u16>(), 64, 8, 64);
    }
}
