//! Row-major matrix views of a kernel's slices: one bounds check per row or column taken, none
//! per element read along it.
//!
//! Indexing a flat slice (`a[row * n + k]`) checks every access against the slice's length,
//! and the compiler cannot drop the check from a loop (`row * n + k` might wrap). A view knows
//! its shape, checked once when it is made: a row is a slice of `cols` elements, a column `rows`
//! elements `cols` apart, and an index below that length (`for k in 0..n` over a row of `n`)
//! needs no check at all.
//!
//! ```text
//! #[offload::kernel]
//! pub fn matmul(n: u32, a: &[f32], b: &[f32], c: &mut [f32]) {
//!     use offload::gpu::{Matrix, global_id_x, global_id_y};
//!     let n = n as usize;
//!     let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
//!     let (row, col) = (global_id_y(), global_id_x());
//!     if row < n && col < n {
//!         let (a_row, b_col) = (a.row(row), b.column(col));
//!         let mut acc = 0.0;
//!         for k in 0..n {
//!             acc += a_row[k] * b_col[k]; // no bounds check: k < n, the lengths of both
//!         }
//!         c[row * n + col] = acc;
//!     }
//! }
//! ```

use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

/// A `rows x cols` row-major view of a slice: element `(r, c)` at `r * cols + c`.
#[derive(Debug)]
pub struct Matrix<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
}

impl<T> Clone for Matrix<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Matrix<'_, T> {}

/// A `rows x cols` row-major view of a mutable slice (see [`Matrix`]).
#[derive(Debug)]
pub struct MatrixMut<'a, T> {
    data: &'a mut [T],
    rows: usize,
    cols: usize,
}

/// Column `c` of a [`Matrix`]: `len` elements, `stride` apart.
#[derive(Debug)]
pub struct Column<'a, T> {
    first: *const T,
    stride: usize,
    len: usize,
    _data: PhantomData<&'a [T]>,
}

impl<T> Clone for Column<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Column<'_, T> {}

/// `rows * cols`, which must fit in `len`: the one check behind a view.
#[inline(always)]
#[track_caller]
fn checked_shape(len: usize, rows: usize, cols: usize) {
    let fits = rows.checked_mul(cols).is_some_and(|n| n <= len);
    assert!(fits, "a {rows} x {cols} matrix does not fit in a slice of length {len}");
}

impl<'a, T> Matrix<'a, T> {
    /// The first `rows * cols` elements of `data` as a `rows x cols` matrix. Panics if they are
    /// more than `data` holds.
    #[inline(always)]
    #[track_caller]
    pub fn new(data: &'a [T], rows: usize, cols: usize) -> Self {
        checked_shape(data.len(), rows, cols);
        Matrix { data, rows, cols }
    }

    /// Rows of the matrix.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the matrix: the length of a row.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Row `r`, `cols` elements. Panics if `r >= rows`.
    #[inline(always)]
    #[track_caller]
    pub fn row(&self, r: usize) -> &'a [T] {
        assert!(r < self.rows, "row {r} out of a matrix of {} rows", self.rows);
        // SAFETY: `r < rows` and `rows * cols <= data.len()` (`new`): the row is inside.
        unsafe { self.data.get_unchecked(r * self.cols..(r + 1) * self.cols) }
    }

    /// Column `c`, `rows` elements `cols` apart. Panics if `c >= cols`.
    #[inline(always)]
    #[track_caller]
    pub fn column(&self, c: usize) -> Column<'a, T> {
        assert!(c < self.cols, "column {c} out of a matrix of {} columns", self.cols);
        Column {
            // Inside `data` when `rows > 0` (`c < cols`); with no rows the column is empty and
            // nothing is read through it.
            first: self.data.as_ptr().wrapping_add(c),
            stride: self.cols,
            len: self.rows,
            _data: PhantomData,
        }
    }

    /// Whether the `rows x cols` block at `(row, col)` lies inside the matrix.
    #[inline(always)]
    pub(crate) fn holds(&self, row: usize, col: usize, rows: usize, cols: usize) -> bool {
        row <= self.rows && rows <= self.rows - row && col <= self.cols && cols <= self.cols - col
    }

    /// Element `(r, c)`, which must lie inside the matrix.
    ///
    /// # Safety
    /// `r < rows` and `c < cols`.
    #[inline(always)]
    pub(crate) unsafe fn get_unchecked(&self, r: usize, c: usize) -> T
    where
        T: Copy,
    {
        // SAFETY: inside the matrix (the caller's), so inside `data` (`new`).
        unsafe { *self.data.get_unchecked(r * self.cols + c) }
    }

    /// The first element's address (with the whole slice's provenance).
    #[inline(always)]
    pub(crate) fn as_ptr(&self) -> *const T {
        self.data.as_ptr()
    }

    /// Element `(r, c)`, or `None` outside the matrix.
    #[inline(always)]
    pub fn get(&self, r: usize, c: usize) -> Option<&'a T> {
        // SAFETY: inside the matrix, so inside `data` (`new`).
        (r < self.rows && c < self.cols)
            .then(|| unsafe { self.data.get_unchecked(r * self.cols + c) })
    }
}

impl<T> Index<(usize, usize)> for Matrix<'_, T> {
    type Output = T;

    /// Element `(row, column)`. Panics outside the matrix.
    #[inline(always)]
    #[track_caller]
    fn index(&self, (r, c): (usize, usize)) -> &T {
        &self.row(r)[c]
    }
}

impl<'a, T> MatrixMut<'a, T> {
    /// The first `rows * cols` elements of `data` as a `rows x cols` matrix. Panics if they are
    /// more than `data` holds.
    #[inline(always)]
    #[track_caller]
    pub fn new(data: &'a mut [T], rows: usize, cols: usize) -> Self {
        checked_shape(data.len(), rows, cols);
        MatrixMut { data, rows, cols }
    }

    /// Rows of the matrix.
    #[inline(always)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Columns of the matrix: the length of a row.
    #[inline(always)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Row `r`. Panics if `r >= rows`.
    #[inline(always)]
    #[track_caller]
    pub fn row(&self, r: usize) -> &[T] {
        self.as_matrix().row(r)
    }

    /// Row `r`, to write. Panics if `r >= rows`.
    #[inline(always)]
    #[track_caller]
    pub fn row_mut(&mut self, r: usize) -> &mut [T] {
        assert!(r < self.rows, "row {r} out of a matrix of {} rows", self.rows);
        // SAFETY: as in `Matrix::row`.
        unsafe { self.data.get_unchecked_mut(r * self.cols..(r + 1) * self.cols) }
    }

    /// Element `(r, c)`, to write, or `None` outside the matrix.
    #[inline(always)]
    pub fn get_mut(&mut self, r: usize, c: usize) -> Option<&mut T> {
        // SAFETY: inside the matrix, so inside `data` (`new`).
        (r < self.rows && c < self.cols)
            .then(|| unsafe { self.data.get_unchecked_mut(r * self.cols + c) })
    }

    /// Writes element `(r, c)`, which must lie inside the matrix.
    ///
    /// # Safety
    /// `r < rows` and `c < cols`.
    #[inline(always)]
    pub(crate) unsafe fn set_unchecked(&mut self, r: usize, c: usize, value: T) {
        // SAFETY: inside the matrix (the caller's), so inside `data` (`new`).
        unsafe { *self.data.get_unchecked_mut(r * self.cols + c) = value }
    }

    /// The same matrix, read-only.
    #[inline(always)]
    pub fn as_matrix(&self) -> Matrix<'_, T> {
        Matrix { data: self.data, rows: self.rows, cols: self.cols }
    }
}

impl<T> Index<(usize, usize)> for MatrixMut<'_, T> {
    type Output = T;

    /// Element `(row, column)`. Panics outside the matrix.
    #[inline(always)]
    #[track_caller]
    fn index(&self, (r, c): (usize, usize)) -> &T {
        &self.row(r)[c]
    }
}

impl<T> IndexMut<(usize, usize)> for MatrixMut<'_, T> {
    /// Element `(row, column)`, to write. Panics outside the matrix.
    #[inline(always)]
    #[track_caller]
    fn index_mut(&mut self, (r, c): (usize, usize)) -> &mut T {
        &mut self.row_mut(r)[c]
    }
}

impl<'a, T> Column<'a, T> {
    /// Elements of the column: the matrix's rows.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the matrix has no rows.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `k` (the column's element in row `k`), or `None` past the end.
    #[inline(always)]
    pub fn get(&self, k: usize) -> Option<&'a T> {
        // SAFETY: `k < len = rows`: element `(k, c)` of the matrix, inside its slice.
        (k < self.len).then(|| unsafe { &*self.first.add(k * self.stride) })
    }

    /// The column's elements, top to bottom.
    #[inline(always)]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a T> + 'a {
        let column = *self;
        // SAFETY: as in `get`.
        (0..column.len).map(move |k| unsafe { &*column.first.add(k * column.stride) })
    }
}

impl<T> Index<usize> for Column<'_, T> {
    type Output = T;

    /// Element `k`. Panics if `k >= len`.
    #[inline(always)]
    #[track_caller]
    fn index(&self, k: usize) -> &T {
        match self.get(k) {
            Some(element) => element,
            None => panic!("index {k} out of a column of {} elements", self.len),
        }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;

    #[test]
    fn rows_columns_and_elements() {
        let data: Vec<u32> = (0..12).collect();
        let m = Matrix::new(&data, 3, 4);
        assert_eq!((m.rows(), m.cols()), (3, 4));
        assert_eq!(m.row(1), &[4, 5, 6, 7]);
        assert_eq!(m.column(2).iter().copied().collect::<Vec<_>>(), [2, 6, 10]);
        assert_eq!(m.column(3)[2], 11);
        assert_eq!(m[(2, 1)], 9);
        assert_eq!(m.get(2, 3), Some(&11));
        assert_eq!(m.get(3, 0), None);
        assert_eq!(m.get(0, 4), None);
        assert_eq!(m.column(0).get(3), None);
    }

    #[test]
    fn a_matrix_may_cover_part_of_its_slice() {
        let data = [1, 2, 3, 4, 5];
        let m = Matrix::new(&data, 2, 2);
        assert_eq!(m.row(1), &[3, 4]);
        let empty = Matrix::new(&data[..0], 0, 3);
        assert!(empty.column(2).is_empty());
        assert_eq!(empty.column(2).iter().count(), 0);
    }

    #[test]
    fn writes_land_in_the_slice() {
        let mut data = [0u8; 6];
        let mut m = MatrixMut::new(&mut data, 2, 3);
        m.row_mut(1).copy_from_slice(&[7, 8, 9]);
        m[(0, 2)] = 5;
        *m.get_mut(0, 0).unwrap() = 1;
        assert!(m.get_mut(2, 0).is_none() && m.get_mut(0, 3).is_none());
        assert_eq!(m.as_matrix().column(2).iter().copied().collect::<Vec<_>>(), [5, 9]);
        assert_eq!(data, [1, 0, 5, 7, 8, 9]);
    }

    #[test]
    #[should_panic(expected = "a 3 x 4 matrix does not fit in a slice of length 11")]
    fn a_shape_larger_than_the_slice_panics() {
        Matrix::new(&[0u8; 11], 3, 4);
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn a_shape_that_overflows_panics() {
        Matrix::new(&[0u8; 11], usize::MAX, 2);
    }

    #[test]
    #[should_panic(expected = "row 3 out of a matrix of 3 rows")]
    fn a_row_past_the_end_panics() {
        Matrix::new(&[0u8; 12], 3, 4).row(3);
    }

    #[test]
    #[should_panic(expected = "column 4 out of a matrix of 4 columns")]
    fn a_column_past_the_end_panics() {
        Matrix::new(&[0u8; 12], 3, 4).column(4);
    }

    #[test]
    #[should_panic(expected = "index 3 out of a column of 3 elements")]
    fn an_element_past_a_column_panics() {
        let data = [0u8; 12];
        let _ = Matrix::new(&data, 3, 4).column(1)[3];
    }
}
