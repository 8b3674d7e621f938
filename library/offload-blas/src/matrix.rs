//! Row-major matrices inside preloaded data, as the routines take them.

use offload::{AsDevicePtr, AsDevicePtrMut, DevicePtr, DevicePtrMut};

/// A `rows x cols` row-major matrix in a guard's data, for reading: element `(i, j)` is the
/// slice's element `i * ld + j`. `ld` (the leading dimension) is `cols` for a matrix whose rows
/// follow each other, more for one inside a wider matrix (a tile: pass a range of the guard,
/// `preload.slice(first..)`, and the wider matrix's `cols`). [`t`](Self::t) reads it
/// transposed, in place.
#[derive(Debug, Clone, Copy)]
pub struct Matrix<'a, T> {
    pub(crate) data: DevicePtr<'a, [T]>,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) ld: usize,
    pub(crate) transposed: bool,
}

/// A `rows x cols` row-major matrix in a [`offload::PreloadMut`]'s data (or a mutable range of
/// it), for writing: as [`Matrix`].
#[derive(Debug)]
pub struct MatrixMut<'a, T> {
    pub(crate) data: DevicePtrMut<'a, [T]>,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) ld: usize,
}

impl<'a, T> Matrix<'a, T> {
    /// `data` as a `rows x cols` matrix whose rows follow each other.
    pub fn new(data: &'a impl AsDevicePtr<[T]>, rows: usize, cols: usize) -> Self {
        Self::with_ld(data, rows, cols, cols)
    }

    /// `data` as a `rows x cols` matrix whose rows start `ld` elements apart.
    pub fn with_ld(data: &'a impl AsDevicePtr<[T]>, rows: usize, cols: usize, ld: usize) -> Self {
        Matrix { data: data.device_ptr(), rows, cols, ld, transposed: false }
    }

    /// The transpose: a `cols x rows` matrix, read from the same data.
    pub fn t(self) -> Self {
        Matrix { transposed: !self.transposed, ..self }
    }

    /// Rows and columns as the routine sees them (after [`t`](Self::t)).
    pub fn shape(&self) -> (usize, usize) {
        if self.transposed { (self.cols, self.rows) } else { (self.rows, self.cols) }
    }
}

impl<'a, T> MatrixMut<'a, T> {
    /// `data` as a `rows x cols` matrix whose rows follow each other.
    pub fn new(data: &'a mut impl AsDevicePtrMut<[T]>, rows: usize, cols: usize) -> Self {
        Self::with_ld(data, rows, cols, cols)
    }

    /// `data` as a `rows x cols` matrix whose rows start `ld` elements apart.
    pub fn with_ld(
        data: &'a mut impl AsDevicePtrMut<[T]>,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Self {
        MatrixMut { data: data.device_ptr_mut(), rows, cols, ld }
    }

    /// Rows and columns.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
}
