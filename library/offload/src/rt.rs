//! Thin checked layer over [`crate::sys`]: one function per runtime call, returning `Result`
//! or `Option`; no other module calls `sys`. `load` loads the runtime at start-up, `gpus` sets
//! its GPUs up before the cubin registers.

mod gpus;
mod load;

use core::ffi::{c_int, c_void};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicI32, Ordering};

pub(crate) use gpus::{before_cuda_register, gpu_ordinal, runtime_gpu_count};
pub(crate) use load::{load_runtime, runtime_table_sealed};

use crate::{Error, sys};

/// How many devices the runtime can offload to: unknown (-1) until first asked, then fixed
/// (devices are found once, when the images register).
static DEVICES: AtomicI32 = AtomicI32::new(-1);

/// How many devices the runtime can offload to: 0 without one, and with offloading disabled.
/// Asks the runtime once per process.
#[inline]
pub(crate) fn device_count() -> usize {
    match DEVICES.load(Ordering::Relaxed) {
        n if n >= 0 => n as usize,
        _ => count_devices(),
    }
}

#[cold]
#[inline(never)]
fn count_devices() -> usize {
    // SAFETY: a plain query; the runtime initialises itself on first use.
    let n = if offload_disabled() { 0 } else { unsafe { sys::omp_get_num_devices() }.max(0) };
    DEVICES.store(n, Ordering::Relaxed);
    n as usize
}

/// Succeeds when `device` (a runtime device number, or -1 for the default) is a device the
/// runtime can offload to: else [`Error::NoDevice`] when it has none, and
/// [`Error::InvalidDefaultDevice`] when the default is not one of them (libomptarget 19 would
/// skip every copy and fail the launches on the host's number, and end the process past it).
/// Every preload and launch goes through here: the count is asked once per process, the
/// default device on each call (a program may change it; a plain read of the thread's setting).
/// Returns the device's number, the default's for -1.
#[inline]
pub(crate) fn require_device(device: i64) -> Result<i64, Error> {
    let count = device_count();
    if count == 0 {
        return Err(Error::NoDevice);
    }
    if device < 0 {
        return default_in(count).map(i64::from);
    }
    // A `Device` is numbered below the count when it is made; checked again, as it costs one
    // comparison.
    match usize::try_from(device) {
        Ok(id) if id < count => Ok(device),
        _ => Err(Error::NoSuchDevice { id: device as usize, count }),
    }
}

/// The runtime's default device: [`Error::NoDevice`] when it has none to offload to, and
/// [`Error::InvalidDefaultDevice`] when the default is not one of its devices.
pub(crate) fn default_device() -> Result<i32, Error> {
    match device_count() {
        0 => Err(Error::NoDevice),
        count => default_in(count),
    }
}

/// The default device, checked against the runtime's `count` devices.
#[inline]
fn default_in(count: usize) -> Result<i32, Error> {
    // SAFETY: a plain query.
    let id = unsafe { sys::omp_get_default_device() };
    match usize::try_from(id) {
        Ok(n) if n < count => Ok(id),
        _ => Err(Error::InvalidDefaultDevice { id: i64::from(id), count }),
    }
}

/// A device argument as the runtime's device number: -1 (the default) becomes the default
/// device's, which the runtime is asked on each call (a program may change it).
pub(crate) fn resolve_device(device: i64) -> Result<i64, Error> {
    if device >= 0 { Ok(device) } else { default_device().map(i64::from) }
}

/// `OMP_TARGET_OFFLOAD=DISABLED`: no device (OpenMP 5.2, 2.5.1), although libomptarget 19 still
/// counts its devices then and only refuses the launches.
fn offload_disabled() -> bool {
    std::env::var("OMP_TARGET_OFFLOAD").is_ok_and(|v| v.eq_ignore_ascii_case("disabled"))
}

/// The device address of host address `host` on runtime device `device`, where it lies inside
/// a mapping (interior addresses included).
pub(crate) fn mapped_ptr(host: *const u8, device: c_int) -> Option<NonNull<c_void>> {
    // SAFETY: a lookup in the runtime's mapping table; nothing is dereferenced.
    NonNull::new(unsafe { sys::omp_get_mapped_ptr(host.cast(), device) })
}

/// Sets the `bytes` bytes that host address `host` is mapped to on runtime device `device` (-1:
/// the default) to `byte`: written in place on a host-offload device (whose memory is this
/// process's, as the plugin's own copies write it; which devices are GPUs is `gpu_ordinal`'s
/// table, which the launches rely on as well), else copied from the host through the runtime,
/// chunk by chunk.
/// `false` where there is no such device, the address is not mapped there or a copy failed.
///
/// # Safety
/// `host..host + bytes` must lie inside one mapping on `device`, which nothing else uses
/// meanwhile.
pub(crate) unsafe fn fill_mapped(host: *const u8, bytes: usize, device: i64, byte: u8) -> bool {
    let Some(device) = resolve_device(device).ok().and_then(|id| c_int::try_from(id).ok()) else {
        return false;
    };
    let Some(target) = mapped_ptr(host, device) else { return false };
    if usize::try_from(device).ok().and_then(gpu_ordinal).is_none() {
        // SAFETY: the mapping's memory, in this process on a host-offload device (the caller's).
        unsafe { target.as_ptr().cast::<u8>().write_bytes(byte, bytes) };
        return true;
    }
    let chunk = vec![byte; bytes.min(1 << 20)];
    // SAFETY: a query.
    let initial = unsafe { sys::omp_get_initial_device() };
    (0..bytes).step_by(chunk.len()).all(|done| {
        let length = chunk.len().min(bytes - done);
        // SAFETY: inside the mapping (the caller's), from a host buffer of at least `length`.
        let status = unsafe {
            sys::omp_target_memcpy(
                target.as_ptr(),
                chunk.as_ptr().cast(),
                length,
                done,
                0,
                device,
                initial,
            )
        };
        status == 0
    })
}

/// `bytes` of page-locked host memory from the runtime's allocator for `device`.
pub(crate) fn alloc_host(bytes: usize, device: c_int) -> Option<NonNull<c_void>> {
    // SAFETY: an allocation; the caller frees it with `free_host` on the same device.
    NonNull::new(unsafe { sys::llvm_omp_target_alloc_host(bytes, device) })
}

/// Frees memory from [`alloc_host`].
///
/// # Safety
/// `ptr` must come from `alloc_host(_, device)` and not be used after.
pub(crate) unsafe fn free_host(ptr: NonNull<c_void>, device: c_int) {
    // SAFETY: per the caller.
    unsafe { sys::llvm_omp_target_free_host(ptr.as_ptr(), device) }
}
