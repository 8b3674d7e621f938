//! Solves `A x = b` by Richardson's iteration, `x += omega (b - A x)`, with the data on the
//! device from the first iteration to the last: per iteration a kernel copies `b` into `r`,
//! cuBLAS's `sgemv` makes `r = b - A x`, and a kernel adds `omega r` to `x`, all three on the
//! library's stream, in order, without the host waiting between them. The matrix is symmetric
//! with its eigenvalues in 3..5, so `omega = 0.25` shrinks the error 4 times an iteration.
//!
//! On a GPU the `sgemv` is cuBLAS's, called through cudarc on a guard's device addresses and
//! the stream `Device::with_cuda_stream` lends; on the host-offload plugin, which has no CUDA
//! stream, `offload_blas::gemv` does the same on the CPU.
//!
//! `cublas [N] [ITERATIONS]`
//@ run: 256 40 => h2d=4 d2h=2

mod kernels;

use cudarc::cublas::result as cublas;
use cudarc::cublas::sys::{self, cublasOperation_t};
use offload::{AsDevicePtr, AsDevicePtrMut, Error, Preload, PreloadMut, preload, preload_mut};

fn main() -> Result<(), Error> {
    let arg = |i: usize, default: usize| {
        std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
    };
    let (n, iterations) = (arg(1, 2048), arg(2, 40));
    let a = matrix(n);
    let b: Vec<f32> = (0..n).map(|i| ((i % 7) as f32 - 3.0) * 0.5).collect();
    let mut x = vec![0.0f32; n];
    let mut r = vec![0.0f32; n];
    {
        let (ga, gb) = (preload(&a[..]), preload(&b[..]));
        let (mut gx, mut gr) = (preload_mut(&mut x[..]), preload_mut(&mut r[..]));
        let blocks = n.div_ceil(256) as u32;
        for _ in 0..iterations {
            offload::launch_async!(kernels::copy, blocks, 256, (&gb, &mut gr))?;
            residual(n, &ga, &gx, &mut gr)?;
            offload::launch_async!(kernels::step, blocks, 256, (0.25f32, &gr, &mut gx))?;
        }
    } // waits for the last iteration, then copies x and r back
    let worst = (0..n)
        .map(|i| {
            let ax: f64 = (0..n).map(|j| a[i * n + j] as f64 * x[j] as f64).sum();
            (ax - b[i] as f64).abs()
        })
        .fold(0.0, f64::max);
    println!(
        "cublas n={n}, {iterations} iterations on {}: max |A x - b| {worst:.2e}",
        offload::device_name()
    );
    if worst > 1e-4 {
        eprintln!("cublas: the iteration did not converge");
        std::process::exit(1);
    }
    Ok(())
}

/// `r = b - A x` with `r` holding `b`: `sgemv(alpha -1, beta 1)`.
fn residual(
    n: usize,
    a: &Preload<[f32]>,
    x: &PreloadMut<[f32]>,
    r: &mut PreloadMut<[f32]>,
) -> Result<(), Error> {
    let (pa, px, pr) = (a.device_ptr(), x.device_ptr(), r.device_ptr_mut());
    let enqueued = pa.device().with_cuda_stream(|stream| {
        let handle = handle(stream)?;
        let n = n as i32;
        // SAFETY: the addresses are live guards' on this GPU, A n x n and x, r n long; r is
        // written through its `DevicePtrMut`; the call is enqueued on the lent stream, inside
        // the closure. A is symmetric, so cuBLAS's column-major reading of it changes nothing.
        unsafe {
            sys::cublasSgemv_v2(
                handle,
                cublasOperation_t::CUBLAS_OP_N,
                n,
                n,
                &-1.0f32,
                pa.addr() as *const f32,
                n,
                px.addr() as *const f32,
                1,
                &1.0f32,
                pr.addr() as *mut f32,
                1,
            )
        }
        .result()
        .map_err(|e| cublas_error("cublasSgemv_v2", e))
    })?;
    match enqueued {
        Some(done) => done,
        // No CUDA stream: the host-offload plugin's device, where the CPU does it.
        None => offload_blas::gemv(-1.0, offload_blas::Matrix::new(a, n, n), x, 1.0, r),
    }
}

/// This GPU's cuBLAS handle, bound to the lent stream: made once (one GPU in this example).
fn handle(stream: &offload::CudaStream) -> Result<sys::cublasHandle_t, Error> {
    static HANDLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    if let Some(&h) = HANDLE.get() {
        return Ok(h as sys::cublasHandle_t);
    }
    // SAFETY: only tries to load the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::Library {
            library: "cuBLAS",
            call: "dlopen",
            message: "libcublas.so.13 not found: install CUDA 13's cuBLAS".into(),
        });
    }
    let h = cublas::create_handle().map_err(|e| cublas_error("cublasCreate_v2", e))?;
    // SAFETY: a handle just made, and the library's stream, which lives as long as the process.
    unsafe { cublas::set_stream(h, stream.as_raw().cast()) }
        .map_err(|e| cublas_error("cublasSetStream_v2", e))?;
    Ok(*HANDLE.get_or_init(|| h as usize) as sys::cublasHandle_t)
}

fn cublas_error(call: &'static str, e: cublas::CublasError) -> Error {
    Error::Library { library: "cuBLAS", call, message: format!("{:?}", e.0) }
}

/// An `n x n` symmetric matrix with its eigenvalues in 3..5: 4 on the diagonal, and small
/// symmetric values elsewhere whose rows sum below 1 in magnitude (Gershgorin).
fn matrix(n: usize) -> Vec<f32> {
    let mut a = vec![0.0f32; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = if i == j {
                4.0
            } else {
                (((i * 31 + j * 31 + i * j) % 17) as f32 - 8.0) / (9.0 * n as f32)
            };
        }
    }
    a
}
