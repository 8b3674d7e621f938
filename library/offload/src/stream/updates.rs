//! A guard's copies between launches (`sync`, `update` and their ranges) and its fills
//! (`write_bytes`) on a GPU's library stream, in order with the kernels queued there. A copy
//! in is enqueued and not waited for (a kernel launched after it sees the data; every later
//! host access to the guard's data waits for the stream first), a copy back is waited for,
//! since its data is lent at once. A fill reads no host memory: it is enqueued and left, as
//! `cudaMemsetAsync` is, and the guard's copy back waits for it with the kernels. Through the
//! runtime's update mapper each copy would wait for the kernels, then copy on a stream of its
//! own and wait again.

use core::ffi::c_int;

use super::copies::{self, Direction};
use super::gpus::{Gpu, device_gpu};
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
    let Some((ordinal, gpu, target)) = on_stream(device, host)? else { return Ok(false) };
    gpu.api.with_context(gpu.context, || {
        // SAFETY: per the caller: mapped, borrowed, and waited for before the guard's next
        // host write.
        let enqueued =
            unsafe { copies::enqueue(gpu.api, gpu.stream, direction, host, target, bytes) };
        // Counted whatever the driver said: the wait covers whatever part of it was taken.
        count_enqueued(ordinal);
        enqueued
    })?;
    if direction == Direction::ToHost {
        synchronize_ordinal(ordinal)?;
    }
    Ok(true)
}

/// Sets the `bytes` bytes of the device copy of the data at host address `host` on runtime
/// device `device` to `byte`, on the library's stream, and returns once that is enqueued.
/// `Ok(false)` without setting anything where [`update`] would not copy.
///
/// # Safety
/// `host..host + bytes` must lie inside one mapping on `device`, borrowed mutably by a live
/// guard.
pub(crate) unsafe fn fill(
    device: i64,
    host: *const u8,
    bytes: usize,
    byte: u8,
) -> Result<bool, Error> {
    let Some((ordinal, gpu, target)) = on_stream(device, host)? else { return Ok(false) };
    gpu.api.with_context(gpu.context, || {
        // SAFETY: device memory of the guard's mapping, which its borrow keeps from the host
        // and from launches not ordered on this stream.
        let enqueued = unsafe { gpu.api.fill_device(target, byte, bytes, gpu.stream) };
        count_enqueued(ordinal);
        enqueued
    })?;
    Ok(true)
}

/// The GPU (its ordinal and library stream) of runtime device `device` and the device address
/// that host address `host` is mapped to there, or `None` where the device has no library
/// stream or the address is not mapped.
fn on_stream(device: i64, host: *const u8) -> Result<Option<(usize, &'static Gpu, u64)>, Error> {
    let id = rt::resolve_device(device)?;
    // A GPU the library could not open (no stream, so nothing of the library's queued there)
    // is left to the runtime as well.
    let Ok(Some((ordinal, gpu))) = device_gpu(id) else { return Ok(None) };
    let target = c_int::try_from(id).ok().and_then(|id| rt::mapped_ptr(host, id));
    Ok(target.map(|target| (ordinal, gpu, target.as_ptr() as u64)))
}
