//! Room for new mappings, checked before the runtime is asked for them: libomptarget 19 ends the
//! process when a device allocation fails (its mapper entry points report nothing), so a
//! mapping that cannot fit must be refused here, as [`Error::OutOfMemory`].
//!
//! A GPU's room is the CUDA driver's free memory less [`GPU_RESERVE`]; the host-offload
//! plugin's devices allocate host memory, bounded by the machine's memory and swap together.
//! The check is made for data not yet mapped only (present data needs no allocation), and it
//! is advisory under races: another thread or process may take the memory in between.

use core::ffi::c_int;

use crate::cuda;
use crate::{Error, rt};

/// Bytes left to the driver and the runtime on a GPU: allocations are rounded up to pages, and
/// the runtime keeps its own pools.
pub(crate) const GPU_RESERVE: usize = 64 << 20;

/// Refuses a new mapping of `bytes` on `device` (a runtime device number, -1 for the default)
/// that the device has no room for.
pub(crate) fn check_room(device: i64, bytes: usize) -> Result<(), Error> {
    if bytes == 0 {
        return Ok(());
    }
    match available(device) {
        Some(available) if bytes > available => Err(Error::OutOfMemory { bytes, available }),
        _ => Ok(()),
    }
}

/// Bytes a new mapping on `device` may take, or `None` when that cannot be told.
fn available(device: i64) -> Option<usize> {
    let id = if device >= 0 { device } else { i64::from(rt::default_device().ok()?) };
    match rt::gpu_ordinal(usize::try_from(id).ok()?) {
        Some(ordinal) => gpu_memory(ordinal).map(|(free, _)| free.saturating_sub(GPU_RESERVE)),
        None => host_limit(),
    }
}

/// Free and total bytes of GPU `ordinal`'s memory, from the CUDA driver, asked in the GPU's
/// primary context (the one the runtime allocates in).
pub(crate) fn gpu_memory(ordinal: usize) -> Option<(usize, usize)> {
    let api = cuda::api()?;
    let context = api.primary_context(c_int::try_from(ordinal).ok()?).ok()?;
    api.with_context(context, || api.memory_info()).ok()
}

/// The host's memory and swap together: more than that cannot be allocated at all.
fn host_limit() -> Option<usize> {
    // SAFETY: all-zero is a valid `sysinfo`, which the kernel then fills in.
    let mut info: libc::sysinfo = unsafe { core::mem::zeroed() };
    // SAFETY: `info` is a writable `sysinfo`.
    if unsafe { libc::sysinfo(&mut info) } != 0 {
        return None;
    }
    let unit = u128::from(info.mem_unit.max(1));
    let bytes = (u128::from(info.totalram) + u128::from(info.totalswap)) * unit;
    Some(usize::try_from(bytes).unwrap_or(usize::MAX))
}
