//! Room for new mappings, checked before the runtime is asked for them: libomptarget 19 ends the
//! process when a device allocation fails (its mapper entry points report nothing), so a
//! mapping that cannot fit must be refused here, as [`Error::OutOfMemory`].
//!
//! A GPU's room is the CUDA driver's free memory less [`GPU_RESERVE`]; the host-offload
//! plugin's devices allocate host memory, bounded by the machine's memory and swap together.
//! The check is made for data not yet mapped only (present data needs no allocation), and it
//! is advisory under races: another thread or process may take the memory in between. A GPU's
//! report is reused for [`FRESH`] (see [`gpu_room`]).

use core::ffi::c_int;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    let Some(id) = rt::resolve_device(device).ok().and_then(|id| usize::try_from(id).ok()) else {
        return Ok(());
    };
    match rt::gpu_ordinal(id) {
        Some(ordinal) => gpu_room(ordinal, bytes),
        None => match host_limit() {
            Some(available) if bytes > available => Err(Error::OutOfMemory { bytes, available }),
            _ => Ok(()),
        },
    }
}

/// What the driver last reported free on a GPU (less [`GPU_RESERVE`] and the new mappings let
/// through since), and when.
#[derive(Clone, Copy)]
struct Known {
    room: usize,
    at: Instant,
}

impl Known {
    /// Lets `bytes` through on this report at `now`, taking them off the room it left, if the
    /// report is fresh and they are at most a quarter of that room.
    fn take(&mut self, bytes: usize, now: Instant) -> bool {
        let taken = now.saturating_duration_since(self.at) < FRESH && bytes <= self.room / 4;
        if taken {
            self.room -= bytes;
        }
        taken
    }
}

/// How long a driver report stands in for another.
const FRESH: Duration = Duration::from_millis(100);

/// The last report of each GPU by ordinal.
static KNOWN: Mutex<BTreeMap<usize, Known>> = Mutex::new(BTreeMap::new());

/// [`check_room`] on GPU `ordinal`. Asking the driver (`cuMemGetInfo`) takes about 5 us on an
/// H200, as long as a small copy, so a fresh report is used again: a mapping of at most a
/// quarter of the room it left is let through and taken off it; a larger one, or any after
/// [`FRESH`], asks again. What the library lets through never adds up to more than the driver
/// reported; memory that other processes take in between is the race this check cannot close.
fn gpu_room(ordinal: usize, bytes: usize) -> Result<(), Error> {
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if known.get_mut(&ordinal).is_some_and(|k| k.take(bytes, Instant::now())) {
        return Ok(());
    }
    let room = || Some(gpu_memory(ordinal)?.0.saturating_sub(GPU_RESERVE));
    let Some(mut available) = room() else {
        return Ok(());
    };
    // What the library's launches gave back to their pool is free to the mapping too.
    if bytes > available && crate::stream::trim_pool(ordinal) {
        available = room().unwrap_or(available);
    }
    if bytes > available {
        known.remove(&ordinal);
        return Err(Error::OutOfMemory { bytes, available });
    }
    known.insert(ordinal, Known { room: available - bytes, at: Instant::now() });
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_report_lets_small_mappings_through_and_counts_them() {
        let at = Instant::now();
        let mut k = Known { room: 1000, at };
        assert!(k.take(250, at));
        assert_eq!(k.room, 750);
        // More than a quarter of what is left: the driver is asked.
        assert!(!k.take(188, at));
        assert!(k.take(187, at + Duration::from_millis(50)));
        assert_eq!(k.room, 563);
        // A stale report is never used.
        assert!(!k.take(1, at + FRESH));
        assert_eq!(k.room, 563);
        // What is let through never adds up to the report.
        let mut k = Known { room: 1000, at };
        let mut through = 0;
        while k.take(10, at) {
            through += 10;
        }
        assert!(through <= 1000 && k.room < 40, "{through} {}", k.room);
    }
}
