//! The element types the routines take, and how each reaches cuBLAS and the CPU's GEMM.

use core::ffi::{c_int, c_void};

use cudarc::cublas::result::{self as cublas, CublasError};
use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t, cublasHandle_t, cublasOperation_t, cudaDataType,
};
use offload::{DeviceCopy, bf16, f16};

mod sealed {
    pub trait Sealed {}
}

/// A GEMM in cuBLAS's column-major terms: `C (m x n) = op(A) (m x k) * op(B) (k x n)`, device
/// addresses and leading dimensions.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ColumnMajor {
    pub(crate) transa: bool,
    pub(crate) transb: bool,
    pub(crate) m: c_int,
    pub(crate) n: c_int,
    pub(crate) k: c_int,
    pub(crate) a: u64,
    pub(crate) lda: c_int,
    pub(crate) b: u64,
    pub(crate) ldb: c_int,
    pub(crate) c: u64,
    pub(crate) ldc: c_int,
}

/// A GEMM on the CPU over strided matrices, as `matrixmultiply` takes it: `C (m x n) = A (m x
/// k) * B (k x n)`, each element `(i, j)` at `i * rows + j * cols` from its pointer.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Strided<A, C> {
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) n: usize,
    pub(crate) a: (*const A, isize, isize),
    pub(crate) b: (*const A, isize, isize),
    pub(crate) c: (*mut C, isize, isize),
}

fn op(transposed: bool) -> cublasOperation_t {
    if transposed { cublasOperation_t::CUBLAS_OP_T } else { cublasOperation_t::CUBLAS_OP_N }
}

/// An element type of matrices that [`gemm`](crate::gemm) multiplies: `f32`, `f64`, and the
/// 16-bit [`bf16`] and [`f16`], whose products accumulate in, and are written as, `f32`.
pub trait Element: sealed::Sealed + DeviceCopy + Copy + Send + Sync + 'static {
    /// What the products accumulate in, `C`'s elements and `alpha`'s and `beta`'s type.
    type Acc: Real;

    /// cuBLAS's GEMM of this type, on `handle`'s stream.
    ///
    /// # Safety
    /// The addresses are device memory of the handle's context holding the shapes given.
    #[doc(hidden)]
    unsafe fn cublas_gemm(
        handle: cublasHandle_t,
        g: ColumnMajor,
        alpha: Self::Acc,
        beta: Self::Acc,
    ) -> Result<(), CublasError>;

    /// The CPU's GEMM of this type: `C = alpha A B + beta C`.
    ///
    /// # Safety
    /// The pointers hold the shapes given, `C` does not overlap `A` or `B`.
    #[doc(hidden)]
    unsafe fn host_gemm(g: Strided<Self, Self::Acc>, alpha: Self::Acc, beta: Self::Acc);
}

/// A real type of every routine: `f32` and `f64`.
pub trait Real: Element<Acc = Self> + PartialEq + core::fmt::Debug {
    /// `x` as `f64`, for the CPU's sums.
    #[doc(hidden)]
    fn to_f64(self) -> f64;
    /// The nearest value to `x`.
    #[doc(hidden)]
    fn from_f64(x: f64) -> Self;
    /// `alpha * x + y`.
    #[doc(hidden)]
    fn axpy(alpha: Self, x: Self, y: Self) -> Self;

    /// cuBLAS's GEMV: `y = alpha op(A) x + beta y`, `A` column-major `m x n`.
    ///
    /// # Safety
    /// As [`Element::cublas_gemm`].
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn cublas_gemv(
        handle: cublasHandle_t,
        transposed: bool,
        dims: (c_int, c_int),
        alpha: Self,
        a: (u64, c_int),
        x: u64,
        beta: Self,
        y: u64,
    ) -> Result<(), CublasError>;
    /// cuBLAS's AXPY of `n` elements: `y = alpha x + y`.
    ///
    /// # Safety
    /// As [`Element::cublas_gemm`].
    #[doc(hidden)]
    unsafe fn cublas_axpy(
        handle: cublasHandle_t,
        n: c_int,
        alpha: Self,
        x: u64,
        y: u64,
    ) -> Result<(), CublasError>;
    /// cuBLAS's DOT of `n` elements, into host memory (the call waits for it).
    ///
    /// # Safety
    /// As [`Element::cublas_gemm`].
    #[doc(hidden)]
    unsafe fn cublas_dot(
        handle: cublasHandle_t,
        n: c_int,
        x: u64,
        y: u64,
    ) -> Result<Self, CublasError>;
    /// cuBLAS's NRM2 of `n` elements, into host memory (the call waits for it).
    ///
    /// # Safety
    /// As [`Element::cublas_gemm`].
    #[doc(hidden)]
    unsafe fn cublas_nrm2(handle: cublasHandle_t, n: c_int, x: u64) -> Result<Self, CublasError>;
}

macro_rules! real {
    ($t:ty, $gemm:ident, $gemv:ident, $axpy:ident, $dot:ident, $nrm2:ident, $host:ident) => {
        impl sealed::Sealed for $t {}

        impl Element for $t {
            type Acc = $t;

            unsafe fn cublas_gemm(
                handle: cublasHandle_t,
                g: ColumnMajor,
                alpha: $t,
                beta: $t,
            ) -> Result<(), CublasError> {
                // SAFETY: per the caller; alpha and beta are host values cuBLAS reads at the call.
                unsafe {
                    cublas::$gemm(
                        handle,
                        op(g.transa),
                        op(g.transb),
                        g.m,
                        g.n,
                        g.k,
                        &alpha,
                        g.a as *const $t,
                        g.lda,
                        g.b as *const $t,
                        g.ldb,
                        &beta,
                        g.c as *mut $t,
                        g.ldc,
                    )
                }
            }

            unsafe fn host_gemm(g: Strided<$t, $t>, alpha: $t, beta: $t) {
                // SAFETY: per the caller.
                unsafe {
                    matrixmultiply::$host(
                        g.m, g.k, g.n, alpha, g.a.0, g.a.1, g.a.2, g.b.0, g.b.1, g.b.2, beta,
                        g.c.0, g.c.1, g.c.2,
                    )
                }
            }
        }

        impl Real for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }

            fn from_f64(x: f64) -> $t {
                x as $t
            }

            fn axpy(alpha: $t, x: $t, y: $t) -> $t {
                alpha * x + y
            }

            unsafe fn cublas_gemv(
                handle: cublasHandle_t,
                transposed: bool,
                (m, n): (c_int, c_int),
                alpha: $t,
                (a, lda): (u64, c_int),
                x: u64,
                beta: $t,
                y: u64,
            ) -> Result<(), CublasError> {
                // SAFETY: per the caller.
                unsafe {
                    cudarc::cublas::sys::$gemv(
                        handle,
                        op(transposed),
                        m,
                        n,
                        &alpha,
                        a as *const $t,
                        lda,
                        x as *const $t,
                        1,
                        &beta,
                        y as *mut $t,
                        1,
                    )
                    .result()
                }
            }

            unsafe fn cublas_axpy(
                handle: cublasHandle_t,
                n: c_int,
                alpha: $t,
                x: u64,
                y: u64,
            ) -> Result<(), CublasError> {
                // SAFETY: per the caller.
                unsafe {
                    cudarc::cublas::sys::$axpy(
                        handle,
                        n,
                        &alpha,
                        x as *const $t,
                        1,
                        y as *mut $t,
                        1,
                    )
                    .result()
                }
            }

            unsafe fn cublas_dot(
                handle: cublasHandle_t,
                n: c_int,
                x: u64,
                y: u64,
            ) -> Result<$t, CublasError> {
                let mut result: $t = 0.0;
                // SAFETY: per the caller; the handle's pointer mode is the host's (the default),
                // so cuBLAS writes `result` before it returns.
                unsafe {
                    cudarc::cublas::sys::$dot(
                        handle,
                        n,
                        x as *const $t,
                        1,
                        y as *const $t,
                        1,
                        &mut result,
                    )
                    .result()?
                };
                Ok(result)
            }

            unsafe fn cublas_nrm2(
                handle: cublasHandle_t,
                n: c_int,
                x: u64,
            ) -> Result<$t, CublasError> {
                let mut result: $t = 0.0;
                // SAFETY: as `cublas_dot`.
                unsafe {
                    cudarc::cublas::sys::$nrm2(handle, n, x as *const $t, 1, &mut result)
                        .result()?
                };
                Ok(result)
            }
        }
    };
}

real!(f32, sgemm, cublasSgemv_v2, cublasSaxpy_v2, cublasSdot_v2, cublasSnrm2_v2, sgemm);
real!(f64, dgemm, cublasDgemv_v2, cublasDaxpy_v2, cublasDdot_v2, cublasDnrm2_v2, dgemm);

macro_rules! half {
    ($t:ty, $cuda:ident) => {
        impl sealed::Sealed for $t {}

        impl Element for $t {
            type Acc = f32;

            unsafe fn cublas_gemm(
                handle: cublasHandle_t,
                g: ColumnMajor,
                alpha: f32,
                beta: f32,
            ) -> Result<(), CublasError> {
                // SAFETY: per the caller; alpha and beta are f32 host values, as
                // CUBLAS_COMPUTE_32F reads them.
                unsafe {
                    cublas::gemm_ex(
                        handle,
                        op(g.transa),
                        op(g.transb),
                        g.m,
                        g.n,
                        g.k,
                        (&alpha as *const f32).cast::<c_void>(),
                        g.a as *const c_void,
                        cudaDataType::$cuda,
                        g.lda,
                        g.b as *const c_void,
                        cudaDataType::$cuda,
                        g.ldb,
                        (&beta as *const f32).cast::<c_void>(),
                        g.c as *mut c_void,
                        cudaDataType::CUDA_R_32F,
                        g.ldc,
                        cublasComputeType_t::CUBLAS_COMPUTE_32F,
                        cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
                    )
                }
            }

            unsafe fn host_gemm(g: Strided<$t, f32>, alpha: f32, beta: f32) {
                // The CPU has no 16-bit GEMM: A and B widened to f32 (exactly), then f32's.
                // SAFETY: per the caller.
                let (a, b) = unsafe { (widen(g.a, g.m, g.k), widen(g.b, g.k, g.n)) };
                let g = Strided {
                    m: g.m,
                    k: g.k,
                    n: g.n,
                    a: (a.as_ptr(), g.k as isize, 1),
                    b: (b.as_ptr(), g.n as isize, 1),
                    c: g.c,
                };
                // SAFETY: `a` and `b` are dense, of the shapes given; C is the caller's.
                unsafe { <f32 as Element>::host_gemm(g, alpha, beta) }
            }
        }

        impl Widen for $t {
            fn widen(self) -> f32 {
                self.to_f32()
            }
        }
    };
}

half!(bf16, CUDA_R_16BF);
half!(f16, CUDA_R_16F);

/// A 16-bit float's exact `f32`.
trait Widen: Copy {
    fn widen(self) -> f32;
}

/// The `rows x cols` strided matrix at `m`, widened into a dense row-major `f32` one.
///
/// # Safety
/// `m` holds a `rows x cols` matrix with its strides.
unsafe fn widen<T: Widen>(m: (*const T, isize, isize), rows: usize, cols: usize) -> Vec<f32> {
    let (ptr, rs, cs) = m;
    let mut out = Vec::with_capacity(rows * cols);
    for i in 0..rows as isize {
        for j in 0..cols as isize {
            // SAFETY: `(i, j)` is inside the matrix, per the caller.
            out.push(unsafe { *ptr.offset(i * rs + j * cs) }.widen());
        }
    }
    out
}
