//! What the program offloads to: the GPU's name, or the runtime's host-offload device.

use core::ffi::{c_char, c_int, c_void};

use crate::sys;

/// What a kernel launched on the default device runs on, for people to read: the NVIDIA GPU's
/// name when the CUDA driver reports one (the runtime's CUDA plugin then comes first), else
/// the runtime's x86_64 host-offload plugin.
pub fn device_name() -> String {
    cuda_device_name()
        .unwrap_or_else(|| "host-offload x86_64 (libomptarget host plugin, no GPU)".to_owned())
}

/// Device 0's name from the CUDA driver, if a driver with a device is installed.
fn cuda_device_name() -> Option<String> {
    type CuInit = unsafe extern "C" fn(u32) -> c_int;
    type CuDeviceGetCount = unsafe extern "C" fn(*mut c_int) -> c_int;
    type CuDeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
    type CuDeviceGetName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
    // SAFETY: the symbols are looked up by their documented names and called with the
    // documented signatures (CUDA driver API); a missing library or symbol returns None.
    unsafe {
        let lib = sys::dlopen(c"libcuda.so.1".as_ptr(), sys::RTLD_LAZY);
        if lib.is_null() {
            return None;
        }
        let sym = |name: &core::ffi::CStr| -> Option<*mut c_void> {
            let p = sys::dlsym(lib, name.as_ptr());
            (!p.is_null()).then_some(p)
        };
        let init: CuInit = core::mem::transmute(sym(c"cuInit")?);
        let count: CuDeviceGetCount = core::mem::transmute(sym(c"cuDeviceGetCount")?);
        let get: CuDeviceGet = core::mem::transmute(sym(c"cuDeviceGet")?);
        let name: CuDeviceGetName = core::mem::transmute(sym(c"cuDeviceGetName")?);
        let mut n = 0;
        if init(0) != 0 || count(&mut n) != 0 || n == 0 {
            return None;
        }
        let mut device = 0;
        if get(&mut device, 0) != 0 {
            return None;
        }
        let mut buf = [0 as c_char; 256];
        if name(buf.as_mut_ptr(), buf.len() as c_int, device) != 0 {
            return None;
        }
        let text = core::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        Some(format!("{text} (CUDA)"))
    }
}
