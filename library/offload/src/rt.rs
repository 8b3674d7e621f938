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
            load_runtime();
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

/// The runtime's libraries, in the order symbols are looked up in them: libomptarget first, whose
/// `omp_get_num_devices` and friends are the real ones (libomp, which it depends on, has its own).
const RUNTIME_LIBRARIES: [&str; 2] = ["libomptarget.so.19.1", "libomp.so.5"];

/// Loads the offload runtime, once: the program does not name it as a dependency (the link
/// leaves its functions weak and binds them on first use), so that a missing runtime is this
/// message instead of the dynamic loader's. The libraries are looked up in
/// `OFFLOAD_RUNTIME_DIR` when it is set, else as the dynamic loader would (`LD_LIBRARY_PATH`,
/// then the folder the program was linked with). A runtime that cannot be loaded ends the
/// process with exit status 1: nothing can run without it.
pub(crate) fn load_runtime() {
    static LOADED: std::sync::Once = std::sync::Once::new();
    LOADED.call_once(|| {
        if let Err(message) = try_load_runtime() {
            eprintln!("offload: error: {message}");
            std::process::exit(1);
        }
    });
}

fn try_load_runtime() -> Result<(), String> {
    let dir = std::env::var_os("OFFLOAD_RUNTIME_DIR").map(std::path::PathBuf::from);
    for library in RUNTIME_LIBRARIES {
        let path = match &dir {
            Some(dir) => dir.join(library),
            None => library.into(),
        };
        let c_path =
            std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
                .map_err(|_| format!("OFFLOAD_RUNTIME_DIR has a NUL byte: {}", path.display()))?;
        // SAFETY: a NUL-terminated path; the runtime's constructors run, as they would have at
        // start-up, and the library is never unloaded.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if handle.is_null() {
            // SAFETY: dlerror returns the message of the failed dlopen, or null.
            let why = unsafe {
                let text = libc::dlerror();
                if text.is_null() {
                    "not found".to_owned()
                } else {
                    core::ffi::CStr::from_ptr(text).to_string_lossy().into_owned()
                }
            };
            return Err(format!(
                "cannot load the offload runtime ({why}){} (this program needs LLVM 19's: \
                 install Debian's libomp5-19 as root with `apt-get install libomp5-19` or \
                 `./x.py setup`, or point OFFLOAD_RUNTIME_DIR at a folder holding {})",
                other_versions(dir.as_deref()),
                RUNTIME_LIBRARIES.join(" and ")
            ));
        }
    }
    Ok(())
}

/// `; found <library> in <folder>, ...` for libomptarget versions other than 19 in the usual
/// places, or nothing.
fn other_versions(dir: Option<&std::path::Path>) -> String {
    let mut folders: Vec<std::path::PathBuf> = dir.into_iter().map(Into::into).collect();
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        let mut llvm: Vec<_> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("llvm-"))
            .map(|e| e.path().join("lib"))
            .collect();
        llvm.sort();
        folders.extend(llvm);
    }
    let mut found = Vec::new();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("libomptarget.so.") && !n.starts_with("libomptarget.so.19"))
            .collect();
        names.sort();
        found.extend(names.into_iter().map(|n| format!("{n} in {}", folder.display())));
    }
    if found.is_empty() { String::new() } else { format!("; found {}", found.join(", ")) }
}
