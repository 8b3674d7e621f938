//! BLAS on preloaded data: the data stays where `preload`/`preload_mut` put it, and the calls
//! run in program order with `launch_async!`'s kernels.
//!
//! ```text
//! use offload_blas::{Matrix, MatrixMut, gemm};
//!
//! let a = preload(&a_host[..]); // m x k, row-major
//! let b = preload(&b_host[..]); // k x n
//! let mut c = preload_mut(&mut c_host[..]); // m x n
//! offload::launch_async!(kernels::prepare, blocks, 256, (&mut c))?;
//! gemm(1.0, Matrix::new(&a, m, k), Matrix::new(&b, k, n), 0.5, MatrixMut::new(&mut c, m, n))?;
//! offload::launch_async!(kernels::finish, blocks, 256, (&mut c))?; // after the product
//! drop(c); // waits for all three, then copies back
//! ```
//!
//! On a GPU each call is cuBLAS's (through cudarc, loaded when first needed), enqueued on the
//! stream the device's launches use: it runs after the kernels launched before it and before
//! those launched after, and nothing waits on the host except [`dot`] and [`nrm2`], which
//! return their value. On the host-offload plugin's devices the same calls compute on the CPU
//! over the plugin's copies (`matrixmultiply`'s GEMM), so one program runs everywhere. No call
//! copies data between the host and the device.
//!
//! Matrices are row-major, as `offload::gpu::Matrix` views are: see [`Matrix`]. Every shape,
//! length, leading dimension and device is checked before anything runs:
//! `offload::Error::InvalidOperands`. A GPU machine without cuBLAS gets `offload::Error::Library`
//! naming what to install.

mod check;
mod cublas;
mod element;
mod host;
mod matrix;
mod routines;

pub use element::{Element, Real};
pub use matrix::{Matrix, MatrixMut};
pub use routines::{axpy, dot, gemm, gemv, nrm2};
