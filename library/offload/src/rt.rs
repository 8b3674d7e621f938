//! Thin checked layer over [`crate::sys`]: one function per runtime query, returning `Result`.

use core::sync::atomic::{AtomicU8, Ordering};

use crate::Error;
use crate::sys;

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
