//! cuBLAS on a GPU: one handle per GPU, bound to the stream the device's launches use, and the
//! library loaded when first needed.

use std::sync::{Mutex, OnceLock};

use cudarc::cublas::result::{self as cublas, CublasError};
use cudarc::cublas::sys::{self, cublasHandle_t};
use offload::{CudaStream, Device, Error};

/// What to say where cuBLAS cannot be loaded.
const MISSING: &str = "cuBLAS was not found on the loader's path (libcublas.so.13, of CUDA \
                       13): install the CUDA toolkit's cuBLAS, or add the folder that holds it \
                       (such as /usr/local/cuda/lib64) to LD_LIBRARY_PATH";

/// A cuBLAS handle of one GPU, its stream set to the library's.
struct Handle {
    ordinal: usize,
    handle: cublasHandle_t,
}

// SAFETY: a cuBLAS handle may be used from any thread, one call at a time: `HANDLES`' lock.
unsafe impl Send for Handle {}

/// The handles made so far; their calls are made holding the lock.
static HANDLES: Mutex<Vec<Handle>> = Mutex::new(Vec::new());

/// Runs `call` with `device`'s handle on its stream, where `device` is a GPU: `Ok(None)` for a
/// host-offload device, without calling. A failure of cuBLAS is `Error::Library` naming `name`.
pub(crate) fn run<R>(
    device: Device,
    name: &'static str,
    call: impl FnOnce(cublasHandle_t) -> Result<R, CublasError>,
) -> Result<Option<R>, Error> {
    let ran = device.with_cuda_stream(|stream| {
        let mut handles = HANDLES.lock().unwrap_or_else(|e| e.into_inner());
        let handle = handle(&mut handles, stream)?;
        call(handle).map_err(|e| failed(name, e))
    })?;
    ran.transpose()
}

/// `stream`'s GPU's handle, made where there is none yet (the GPU's context is current).
fn handle(handles: &mut Vec<Handle>, stream: &CudaStream) -> Result<cublasHandle_t, Error> {
    if let Some(h) = handles.iter().find(|h| h.ordinal == stream.ordinal()) {
        return Ok(h.handle);
    }
    if !loadable() {
        return Err(Error::Library { library: "cuBLAS", call: "dlopen", message: MISSING.into() });
    }
    let handle = cublas::create_handle().map_err(|e| failed("cublasCreate_v2", e))?;
    // SAFETY: a handle just made, and the library's stream of its GPU, which lives as long as
    // the process.
    if let Err(e) = unsafe { cublas::set_stream(handle, stream.as_raw().cast()) } {
        // SAFETY: made above, used by nothing.
        let _ = unsafe { cublas::destroy_handle(handle) };
        return Err(failed("cublasSetStream_v2", e));
    }
    handles.push(Handle { ordinal: stream.ordinal(), handle });
    Ok(handle)
}

/// Whether the cuBLAS library can be loaded (asked once): cudarc ends the process on a call it
/// cannot load.
fn loadable() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: tries to load the library, and nothing else.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

fn failed(call: &'static str, e: CublasError) -> Error {
    Error::Library { library: "cuBLAS", call, message: format!("{:?}", e.0) }
}
