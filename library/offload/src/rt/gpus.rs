//! The runtime's GPUs, set up before the cubin registers: which CUDA ordinals the runtime
//! numbers, and each one's primary context with the driver's default wait.

use std::sync::OnceLock;

use crate::cuda;

/// The runtime's CUDA devices, as CUDA ordinals: entry `n` is the GPU the runtime numbers `n`.
/// Set before the images register when one of them is a cubin: the runtime registers it first
/// and numbers, in the driver's order, the GPUs that can run it (same major compute capability,
/// same or higher minor, as libomptarget 19's CUDA plugin checks). Unset without a cubin: every
/// device is then a host-offload one.
static RUNTIME_GPUS: OnceLock<Vec<usize>> = OnceLock::new();

/// The CUDA ordinal of runtime device `id` when it is a GPU.
pub(crate) fn gpu_ordinal(id: usize) -> Option<usize> {
    RUNTIME_GPUS.get()?.get(id).copied()
}

/// How many of the runtime's devices are GPUs (they come first).
pub(crate) fn runtime_gpu_count() -> usize {
    RUNTIME_GPUS.get().map_or(0, Vec::len)
}

/// How threads wait for the GPU, from `OFFLOAD_CUDA_WAIT`: `auto` (the default, the CUDA
/// driver's own: spin while there are fewer contexts than CPUs), `spin`, `yield` or `blocking`
/// (libomptarget's choice when left alone: the waiting thread sleeps, and every synchronous
/// launch then pays the wake-up).
fn wait_mode() -> Option<core::ffi::c_uint> {
    let value = std::env::var("OFFLOAD_CUDA_WAIT").unwrap_or_default();
    match value.to_ascii_lowercase().as_str() {
        "" | "auto" => Some(cuda::CU_CTX_SCHED_AUTO),
        "spin" => Some(cuda::CU_CTX_SCHED_SPIN),
        "yield" => Some(cuda::CU_CTX_SCHED_YIELD),
        "blocking" => None,
        _ => {
            eprintln!(
                "offload: warning: OFFLOAD_CUDA_WAIT={value} is not auto, spin, yield or \
                 blocking (using auto)"
            );
            Some(cuda::CU_CTX_SCHED_AUTO)
        }
    }
}

/// Runs before a program that embeds a cubin registers it (the lowering's registration
/// constructor calls it first, with the cubin). Records which GPUs the runtime will number
/// (those that can run the cubin), then sets their contexts up: libomptarget's CUDA plugin gives
/// each GPU's primary context the flag `CU_CTX_SCHED_BLOCKING_SYNC` when it activates it, unless
/// the context is already active; activating them here first, with the wait mode of
/// [`wait_mode`], keeps the driver's default, under which a synchronous launch costs what it
/// costs in CUDA by hand.
///
/// # Safety
/// `image` must point to `len` readable bytes.
pub(crate) unsafe fn before_cuda_register(image: *const u8, len: i64) {
    let image = match usize::try_from(len) {
        // SAFETY: per the caller.
        Ok(len) if !image.is_null() => unsafe { core::slice::from_raw_parts(image, len) },
        _ => &[],
    };
    let api = cuda::api();
    let gpus: Vec<usize> = match (api, offload_abi::cubin::sm(image)) {
        (Some(api), Some(sm)) => (0..api.device_count())
            .filter(|&ordinal| {
                api.compute_capability(ordinal as core::ffi::c_int)
                    .is_some_and(|(major, minor)| major == sm / 10 && minor >= sm % 10)
            })
            .collect(),
        _ => Vec::new(),
    };
    let _ = RUNTIME_GPUS.set(gpus);
    let (Some(api), Some(mode), false) = (api, wait_mode(), super::offload_disabled()) else {
        return;
    };
    for &ordinal in RUNTIME_GPUS.get().into_iter().flatten() {
        // A GPU that cannot be set up here is left to the runtime, which reports it.
        let _ = api.activate_primary_context(ordinal as core::ffi::c_int, mode);
    }
}
