//! Thin checked layer over [`crate::sys`]: one function per runtime query, returning `Result`.

use core::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use crate::{Error, cuda, sys};

/// Whether the runtime has a device: unknown until first asked, then fixed (devices are found
/// once, when the images register).
static HAS_DEVICE: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// Succeeds when the runtime has a device to offload to, else [`Error::NoDevice`]. Asks the
/// runtime once per process: every preload goes through here, and a mapper pair on present
/// data costs about a microsecond.
#[inline]
pub fn require_device() -> Result<(), Error> {
    let known = match HAS_DEVICE.load(Ordering::Relaxed) {
        UNKNOWN => {
            // `OMP_TARGET_OFFLOAD=DISABLED` means no device (OpenMP 5.2, 2.5.1), although
            // libomptarget 19 still counts its devices then and only refuses the launches.
            let disabled = std::env::var("OMP_TARGET_OFFLOAD")
                .is_ok_and(|v| v.eq_ignore_ascii_case("disabled"));
            // SAFETY: a plain query; the runtime initialises itself on first use.
            let yes = !disabled && unsafe { sys::omp_get_num_devices() } > 0;
            let v = if yes { YES } else { NO };
            HAS_DEVICE.store(v, Ordering::Relaxed);
            v
        }
        v => v,
    };
    if known == YES { Ok(()) } else { Err(Error::NoDevice) }
}

/// The runtime's default device, or [`Error::NoDevice`] when it has none to offload to.
pub(crate) fn default_device() -> Result<i32, Error> {
    require_device()?;
    // SAFETY: a plain query.
    let device = unsafe { sys::omp_get_default_device() };
    if device < 0 {
        return Err(Error::NoDevice);
    }
    Ok(device)
}

/// Set before the program's images register when one of them is an NVIDIA cubin, so that the
/// runtime numbers the GPUs first.
static CUDA_IMAGE: AtomicBool = AtomicBool::new(false);

/// Whether the program embeds an NVIDIA image (its registration told the library so).
pub(crate) fn cuda_image_registered() -> bool {
    CUDA_IMAGE.load(Ordering::Relaxed)
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
/// constructor calls it first). libomptarget's CUDA plugin gives each GPU's primary context the
/// flag `CU_CTX_SCHED_BLOCKING_SYNC` when it activates it, unless the context is already
/// active: activating them here first, with the wait mode of [`wait_mode`], keeps the driver's
/// default, under which a synchronous launch costs what it costs in CUDA by hand.
pub(crate) fn before_cuda_register() {
    CUDA_IMAGE.store(true, Ordering::Relaxed);
    let disabled =
        std::env::var("OMP_TARGET_OFFLOAD").is_ok_and(|v| v.eq_ignore_ascii_case("disabled"));
    let Some(mode) = wait_mode() else { return };
    let Some(api) = (!disabled).then(cuda::api).flatten() else { return };
    for ordinal in 0..api.device_count() {
        // A GPU that cannot be set up here is left to the runtime, which reports it.
        let _ = api.activate_primary_context(ordinal as core::ffi::c_int, mode);
    }
}
