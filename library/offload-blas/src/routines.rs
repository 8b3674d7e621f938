//! The routines: operands checked, then cuBLAS on a GPU's stream or the CPU on the host-offload
//! plugin's devices.

use offload::{AsDevicePtr, AsDevicePtrMut, Error};

use crate::check::{self, agree, fits, int};
use crate::element::{ColumnMajor, Element, Real, Strided};
use crate::matrix::{Matrix, MatrixMut};
use crate::{cublas, host};

/// `C = alpha op(A) op(B) + beta C`: `op(A)` is `m x k` (`A`, or `A.t()`), `op(B)` `k x n`, `C`
/// `m x n`. Products accumulate in `T::Acc` (`f32` for `bf16` and `f16`, whose `C` is `f32`);
/// with `beta` 0, `C`'s old values are not read (NaNs there stay out of the result). An empty
/// product (`k` 0) into a `C` that is not empty is refused.
pub fn gemm<T: Element>(
    alpha: T::Acc,
    a: Matrix<'_, T>,
    b: Matrix<'_, T>,
    beta: T::Acc,
    c: MatrixMut<'_, T::Acc>,
) -> Result<(), Error> {
    const R: &str = "gemm";
    fits(R, "A", (a.rows, a.cols, a.ld), a.data.len())?;
    fits(R, "B", (b.rows, b.cols, b.ld), b.data.len())?;
    fits(R, "C", (c.rows, c.cols, c.ld), c.data.len())?;
    let ((m, k), (kb, n)) = (a.shape(), b.shape());
    agree(R, "op(A)'s columns and op(B)'s rows", k, kb)?;
    agree(R, "op(A)'s rows and C's", m, c.rows)?;
    agree(R, "op(B)'s columns and C's", n, c.cols)?;
    empty_inner(R, (m, n), k)?;
    let device = check::same_device(R, &[a.data.device(), b.data.device(), c.data.device()])?;
    // Row-major C = op(A) op(B) is column-major C' = op(B)' op(A)', each matrix's data read as
    // its column-major transpose: B first.
    let g = ColumnMajor {
        transa: b.transposed,
        transb: a.transposed,
        m: int(R, "n", n)?,
        n: int(R, "m", m)?,
        k: int(R, "k", k)?,
        a: b.data.addr(),
        lda: int(R, "B's leading dimension", b.ld)?,
        b: a.data.addr(),
        ldb: int(R, "A's leading dimension", a.ld)?,
        c: c.data.addr(),
        ldc: int(R, "C's leading dimension", c.ld)?,
    };
    if m == 0 || n == 0 {
        return Ok(());
    }
    // SAFETY: the addresses are live guards' data on `device`, of the shapes checked above.
    if cublas::run(device, "cublasGemm", |h| unsafe { T::cublas_gemm(h, g, alpha, beta) })?
        .is_some()
    {
        return Ok(());
    }
    // SAFETY: a host-offload device: the guards' data in this process, shapes checked; `C` is a
    // `PreloadMut`'s, borrowed mutably, so it overlaps neither `A` nor `B`.
    unsafe {
        T::host_gemm(
            Strided {
                m,
                k,
                n,
                a: strided(&a),
                b: strided(&b),
                c: (c.data.addr() as usize as *mut T::Acc, c.ld as isize, 1),
            },
            alpha,
            beta,
        )
    };
    Ok(())
}

/// Refuses a product over an empty inner dimension (`k` 0) with a result that is not empty:
/// it would only scale the result by `beta`, which cuBLAS skips (BLAS's quick return) and the
/// CPU's GEMM does, so the two would disagree.
fn empty_inner(routine: &'static str, (m, n): (usize, usize), k: usize) -> Result<(), Error> {
    if k == 0 && m > 0 && n > 0 {
        return Err(check::invalid(
            routine,
            "op(A) has no columns: the product is empty, and the result would only be scaled \
             by beta (scale it with a kernel)"
                .to_owned(),
        ));
    }
    Ok(())
}

/// A matrix's data with its strides as the CPU's GEMM takes them (after `t()`).
fn strided<T>(m: &Matrix<'_, T>) -> (*const T, isize, isize) {
    let ptr = m.data.addr() as usize as *const T;
    if m.transposed { (ptr, 1, m.ld as isize) } else { (ptr, m.ld as isize, 1) }
}

/// `y = alpha op(A) x + beta y`: `op(A)` is `m x n`, `x` `n` long, `y` `m` long. With `beta` 0,
/// `y`'s old values are not read. `n` 0 with `m` not is refused, as `gemm`'s empty product.
pub fn gemv<T: Real>(
    alpha: T,
    a: Matrix<'_, T>,
    x: &impl AsDevicePtr<[T]>,
    beta: T,
    y: &mut impl AsDevicePtrMut<[T]>,
) -> Result<(), Error> {
    const R: &str = "gemv";
    let (x, y) = (x.device_ptr(), y.device_ptr_mut());
    fits(R, "A", (a.rows, a.cols, a.ld), a.data.len())?;
    let (m, n) = a.shape();
    agree(R, "op(A)'s columns and x's length", n, x.len())?;
    agree(R, "op(A)'s rows and y's length", m, y.len())?;
    empty_inner(R, (m, 1), n)?;
    let device = check::same_device(R, &[a.data.device(), x.device(), y.device()])?;
    // A's data read as its column-major transpose: `cols x rows`.
    let dims = (int(R, "A's columns", a.cols)?, int(R, "A's rows", a.rows)?);
    let ld = int(R, "A's leading dimension", a.ld)?;
    if m == 0 {
        return Ok(());
    }
    let (xa, ya) = (x.addr(), y.addr());
    // SAFETY: as `gemm`'s. Row-major `A` is column-major `A'`: `op(A)` is `A'` transposed
    // where `A` is not.
    let on_gpu = cublas::run(device, "cublasGemv", |h| unsafe {
        T::cublas_gemv(h, !a.transposed, dims, alpha, (a.data.addr(), ld), xa, beta, ya)
    })?;
    if on_gpu.is_none() {
        // SAFETY: as `gemm`'s; `x` and `y` are `n x 1` and `m x 1`.
        unsafe {
            T::host_gemm(
                Strided {
                    m,
                    k: n,
                    n: 1,
                    a: strided(&a),
                    b: (xa as usize as *const T, 1, 1),
                    c: (ya as usize as *mut T, 1, 1),
                },
                alpha,
                beta,
            )
        };
    }
    Ok(())
}

/// `y = alpha x + y`, `x` and `y` of one length.
pub fn axpy<T: Real>(
    alpha: T,
    x: &impl AsDevicePtr<[T]>,
    y: &mut impl AsDevicePtrMut<[T]>,
) -> Result<(), Error> {
    const R: &str = "axpy";
    let (x, y) = (x.device_ptr(), y.device_ptr_mut());
    agree(R, "x's and y's lengths", x.len(), y.len())?;
    let device = check::same_device(R, &[x.device(), y.device()])?;
    let n = int(R, "the length", x.len())?;
    if n == 0 {
        return Ok(());
    }
    let (xa, ya) = (x.addr(), y.addr());
    // SAFETY: as `gemm`'s.
    if cublas::run(device, "cublasAxpy", |h| unsafe { T::cublas_axpy(h, n, alpha, xa, ya) })?
        .is_none()
    {
        // SAFETY: a host-offload device's data; `y` borrowed mutably, so apart from `x`.
        let (x, y) = unsafe { (host::slice(xa, x.len()), host::slice_mut(ya, y.len())) };
        host::axpy(alpha, x, y);
    }
    Ok(())
}

/// The dot product of `x` and `y`, of one length: waits for the device's work before it (the
/// value comes to the host).
pub fn dot<T: Real>(x: &impl AsDevicePtr<[T]>, y: &impl AsDevicePtr<[T]>) -> Result<T, Error> {
    const R: &str = "dot";
    let (x, y) = (x.device_ptr(), y.device_ptr());
    agree(R, "x's and y's lengths", x.len(), y.len())?;
    let device = check::same_device(R, &[x.device(), y.device()])?;
    let n = int(R, "the length", x.len())?;
    let (xa, ya) = (x.addr(), y.addr());
    // SAFETY: as `gemm`'s.
    match cublas::run(device, "cublasDot", |h| unsafe { T::cublas_dot(h, n, xa, ya) })? {
        Some(value) => Ok(value),
        // SAFETY: a host-offload device's data, only read.
        None => {
            Ok(host::dot(unsafe { host::slice(xa, x.len()) }, unsafe { host::slice(ya, y.len()) }))
        }
    }
}

/// The Euclidean norm of `x`: waits for the device's work before it, as [`dot`].
pub fn nrm2<T: Real>(x: &impl AsDevicePtr<[T]>) -> Result<T, Error> {
    const R: &str = "nrm2";
    let x = x.device_ptr();
    let n = int(R, "the length", x.len())?;
    let xa = x.addr();
    // SAFETY: as `gemm`'s.
    match cublas::run(x.device(), "cublasNrm2", |h| unsafe { T::cublas_nrm2(h, n, xa) })? {
        Some(value) => Ok(value),
        // SAFETY: a host-offload device's data, only read.
        None => Ok(host::nrm2(unsafe { host::slice(xa, x.len()) })),
    }
}
