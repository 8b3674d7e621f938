//! Thin checked layer over [`crate::sys`]: one function per runtime query, returning `Result`.

use crate::Error;
use crate::sys;

/// The runtime's default device, or [`Error::NoDevice`] when it has none to offload to.
pub(crate) fn default_device() -> Result<i32, Error> {
    // SAFETY: plain queries without arguments; the runtime initialises itself on first use.
    let (count, device) = unsafe { (sys::omp_get_num_devices(), sys::omp_get_default_device()) };
    if count <= 0 || device < 0 || device >= count {
        return Err(Error::NoDevice);
    }
    Ok(device)
}

/// Whether `bytes` at `ptr` are mapped on `device`.
pub(crate) fn is_present(ptr: *const u8, device: i32) -> bool {
    // SAFETY: the runtime only looks the address up in its mapping table.
    unsafe { sys::omp_target_is_present(ptr.cast(), device) != 0 }
}
