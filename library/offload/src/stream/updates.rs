//! A guard's copies between launches (`sync`, `update` and their ranges) on a GPU's library
//! stream, in order with the kernels queued there: a copy in is enqueued and not waited for (a
//! kernel launched after it sees the data; every later host access to the guard's data waits
//! for the stream first), a copy back is waited for, since its data is lent at once. Through
//! the runtime's update mapper each copy would wait for the kernels, then copy on a stream of
//! its own and wait again.

use core::ffi::c_int;

use super::copies::{self, Direction};
use super::gpus::device_gpu;
use super::pending::{count_enqueued, synchronize_ordinal};
use crate::{Error, rt};

/// Copies `bytes` at host address `host` to (`Direction::ToDevice`) or from the device copy of
/// the data mapped there on runtime device `device` (-1: the default), on the library's stream.
/// A copy in returns once enqueued, a copy back once done. `Ok(false)` without copying where
/// the device has no library stream (the host-offload plugin's devices, GPUs beyond the table,
/// a GPU the library could not open) or the address is not mapped there: the runtime's update
/// mapper copies then.
///
/// # Safety
/// `host..host + bytes` must lie inside one mapping on `device`, borrowed by a live guard
/// (mutably, for a copy back), and the guard's host writes after a copy in must wait for the
/// device's stream first (`synchronize_pending`), as the guard's entry points do. A guard
/// leaked after a copy in ends the borrow before the wait: see the module `stream`'s fact 4.
pub(crate) unsafe fn update(
    device: i64,
    direction: Direction,
    host: *const u8,
    bytes: usize,
) -> Result<bool, Error> {
    let id = rt::resolve_device(device)?;
    // A GPU the library could not open (no stream, so nothing of the library's queued there)
    // is left to the runtime's copy as well.
    let Ok(Some((ordinal, gpu))) = device_gpu(id) else { return Ok(false) };
    let Some(target) = c_int::try_from(id).ok().and_then(|id| rt::mapped_ptr(host, id)) else {
        return Ok(false);
    };
    gpu.api.with_context(gpu.context, || {
        // SAFETY: per the caller: mapped, borrowed, and waited for before the guard's next
        // host write.
        let enqueued = unsafe {
            copies::enqueue(gpu.api, gpu.stream, direction, host, target.as_ptr() as u64, bytes)
        };
        // Counted whatever the driver said: the wait covers whatever part of it was taken.
        count_enqueued(ordinal);
        enqueued
    })?;
    if direction == Direction::ToHost {
        synchronize_ordinal(ordinal)?;
    }
    Ok(true)
}
