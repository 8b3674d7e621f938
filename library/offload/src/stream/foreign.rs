//! Work that code outside the library enqueues on a GPU's stream (a vendor library handed the
//! stream through `offload::CudaStream`), counted as the library's own launches are: the waits
//! before a guard's end mapper, `sync`, `update` and a preload then cover it too.

use super::gpus::device_gpu;
use super::pending::{MAX_GPUS, count_enqueued};
use crate::cuda::{CuContext, CuStream};
use crate::{Error, rt};

/// Runs `enqueue` with the GPU of runtime device `device` (-1: the default) current in its
/// primary context, handing it the GPU's CUDA ordinal, that context and the library's stream,
/// and counts whatever it enqueued on the stream as pending, also when it unwinds. `Ok(None)`
/// without running it for the host-offload plugin's devices, whose data is host memory and
/// whose work is synchronous; [`Error::Library`] for a GPU beyond the library's table, which
/// has no stream of the library's.
pub(crate) fn with_stream<R>(
    device: i64,
    enqueue: impl FnOnce(usize, CuContext, CuStream) -> R,
) -> Result<Option<R>, Error> {
    let Some((ordinal, gpu)) = device_gpu(device)? else {
        let id = rt::resolve_device(device)?;
        if usize::try_from(id).ok().and_then(rt::gpu_ordinal).is_none() {
            return Ok(None);
        }
        return Err(Error::Library {
            library: "offload",
            call: "Device::with_cuda_stream",
            message: format!(
                "device {id} is a GPU of CUDA ordinal {MAX_GPUS} or above, where the library \
                 has no stream (its launches go through libomptarget): use a GPU of a lower \
                 ordinal (CUDA_VISIBLE_DEVICES)"
            ),
        });
    };
    gpu.api.with_context(gpu.context, || {
        // Counted once `enqueue` has returned or unwound, whatever it enqueued: a wait that
        // sees the count covers all of it. (Counted before, a wait between the count and the
        // enqueue would cover the count and not the work.)
        let _count = CountOnDrop(ordinal);
        Ok(Some(enqueue(ordinal, gpu.context, gpu.stream)))
    })
}

/// Counts work enqueued on GPU `.0`'s stream when dropped.
struct CountOnDrop(usize);

impl Drop for CountOnDrop {
    fn drop(&mut self) {
        count_enqueued(self.0);
    }
}
