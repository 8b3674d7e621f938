//! Work that code outside the library enqueues on a GPU's stream (a vendor library handed the
//! stream through `offload::CudaStream`), counted as the library's own launches are: the waits
//! before a guard's end mapper, `sync`, `update` and a preload then cover it too.

use super::gpus::device_gpu;
use super::pending::count_enqueued;
use crate::Error;
use crate::cuda::{CuContext, CuStream};

/// Runs `enqueue` with the GPU of runtime device `device` (-1: the default) current in its
/// primary context, handing it the GPU's CUDA ordinal, that context and the library's stream,
/// and counts whatever it enqueued on the stream as pending. `Ok(None)` without running it for
/// the host-offload plugin's devices (and GPUs beyond the library's table), which have no
/// stream: their work is synchronous.
pub(crate) fn with_stream<R>(
    device: i64,
    enqueue: impl FnOnce(usize, CuContext, CuStream) -> R,
) -> Result<Option<R>, Error> {
    let Some((ordinal, gpu)) = device_gpu(device)? else { return Ok(None) };
    gpu.api.with_context(gpu.context, || {
        let value = enqueue(ordinal, gpu.context, gpu.stream);
        // Counted after the work is enqueued, whatever `enqueue` returns: a wait that sees
        // the count covers all of it.
        count_enqueued(ordinal);
        Ok(Some(value))
    })
}
