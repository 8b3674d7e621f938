//! Thin checked layer over [`crate::sys`]: one function per runtime query, returning `Result`.

use core::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

use crate::{Error, cuda, sys};

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
    // `OMP_TARGET_OFFLOAD=DISABLED` means no device (OpenMP 5.2, 2.5.1), although libomptarget
    // 19 still counts its devices then and only refuses the launches.
    let disabled =
        std::env::var("OMP_TARGET_OFFLOAD").is_ok_and(|v| v.eq_ignore_ascii_case("disabled"));
    // SAFETY: a plain query; the runtime initialises itself on first use.
    let n = if disabled { 0 } else { unsafe { sys::omp_get_num_devices() }.max(0) };
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
pub fn require_device(device: i64) -> Result<i64, Error> {
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

/// The runtime's CUDA devices, as CUDA ordinals: entry `n` is the GPU the runtime numbers `n`.
/// Set before the images register when one of them is a cubin: the runtime registers it first
/// and numbers, in the driver's order, the GPUs that can run it (same major compute capability,
/// same or higher minor, as libomptarget 19's CUDA plugin checks). Unset without a cubin: every
/// device is then a host-offload one.
static RUNTIME_GPUS: OnceLock<Vec<usize>> = OnceLock::new();

/// The CUDA ordinal of runtime device `id` when it is a GPU.
pub(crate) fn gpu_ordinal(id: usize) -> Option<usize> {
    RUNTIME_GPUS.get()?.get(id).copied()
}

/// How many of the runtime's devices are GPUs (they come first).
pub(crate) fn runtime_gpu_count() -> usize {
    RUNTIME_GPUS.get().map_or(0, Vec::len)
}

/// The SM a cubin is built for: the low byte of its ELF `e_flags` (ELF ABI version 7, as
/// libomptarget 19 reads it), e.g. 90 for sm_90.
fn cubin_sm(image: &[u8]) -> Option<u32> {
    let flags: [u8; 4] = image.get(48..52)?.try_into().ok()?;
    (image.starts_with(b"\x7fELF")).then(|| u32::from_le_bytes(flags) & 0xff)
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
/// constructor calls it first, with the cubin). Records which GPUs the runtime will number
/// (those that can run the cubin), then sets their contexts up: libomptarget's CUDA plugin gives
/// each GPU's primary context the flag `CU_CTX_SCHED_BLOCKING_SYNC` when it activates it, unless
/// the context is already active; activating them here first, with the wait mode of
/// [`wait_mode`], keeps the driver's default, under which a synchronous launch costs what it
/// costs in CUDA by hand.
///
/// # Safety
/// `image` must point to `len` readable bytes.
pub(crate) unsafe fn before_cuda_register(image: *const u8, len: i64) {
    let image = match usize::try_from(len) {
        // SAFETY: per the caller.
        Ok(len) if !image.is_null() => unsafe { core::slice::from_raw_parts(image, len) },
        _ => &[],
    };
    let api = cuda::api();
    let gpus: Vec<usize> = match (api, cubin_sm(image)) {
        (Some(api), Some(sm)) => (0..api.device_count())
            .filter(|&ordinal| {
                api.compute_capability(ordinal as core::ffi::c_int)
                    .is_some_and(|(major, minor)| major == sm / 10 && minor >= sm % 10)
            })
            .collect(),
        _ => Vec::new(),
    };
    let _ = RUNTIME_GPUS.set(gpus);
    let disabled =
        std::env::var("OMP_TARGET_OFFLOAD").is_ok_and(|v| v.eq_ignore_ascii_case("disabled"));
    let (Some(api), Some(mode), false) = (api, wait_mode(), disabled) else { return };
    for &ordinal in RUNTIME_GPUS.get().into_iter().flatten() {
        // A GPU that cannot be set up here is left to the runtime, which reports it.
        let _ = api.activate_primary_context(ordinal as core::ffi::c_int, mode);
    }
}

/// The runtime's libraries, in load order: libomp, which libomptarget depends on, then
/// libomptarget, whose handle the functions are looked up in (its own first, then libomp's).
const RUNTIME_LIBRARIES: [&str; 2] = ["libomp.so.5", "libomptarget.so.19.1"];

/// Loads the offload runtime and fills `table` with the addresses of the `n` functions named
/// by `names`: the program calls the runtime through that table (the link stage redirected its
/// calls there and left the runtime out of the dynamic loader's dependencies), so that a
/// missing runtime is this message instead of the loader's. The libraries are looked up in
/// `OFFLOAD_RUNTIME_DIR` when it is set, else as the dynamic loader would (`LD_LIBRARY_PATH`,
/// then the folder the program was linked with); the functions with `dlsym` on libomptarget's
/// handle, so another OpenMP runtime in the process cannot capture them. A runtime that cannot
/// be loaded, or lacks a function, ends the process with exit status 1: nothing can run
/// without it.
///
/// Once filled, the table is made read-only where it has whole pages of its own (`table_bytes`
/// a multiple of the page size, `table` aligned to one; the lowering gives it that): a stray
/// write cannot then redirect the program's runtime calls, as full RELRO protects the dynamic
/// loader's table. Where it cannot be, the table stays writable, as it was.
///
/// # Safety
/// `names` must point to `n` NUL-terminated strings and `table` to `table_bytes` writable bytes
/// (at least `n` pointers) that nothing else uses.
pub(crate) unsafe fn load_runtime(
    names: *const *const core::ffi::c_char,
    table: *mut *const core::ffi::c_void,
    n: usize,
    table_bytes: usize,
) {
    // SAFETY: per the caller.
    if let Err(message) = unsafe { try_load_runtime(names, table, n) } {
        eprintln!("offload: error: {message}");
        std::process::exit(1);
    }
    // SAFETY: per the caller, the bytes are the table's alone.
    unsafe { seal(table.cast(), table_bytes) };
}

/// Whether [`load_runtime`] made the table read-only.
static SEALED: AtomicBool = AtomicBool::new(false);

pub(crate) fn runtime_table_sealed() -> bool {
    SEALED.load(Ordering::Acquire)
}

/// Makes `bytes` at `table` read-only where they are whole pages.
///
/// # Safety
/// The pages must hold nothing but the table.
unsafe fn seal(table: *mut core::ffi::c_void, bytes: usize) {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let Ok(page) = usize::try_from(page) else { return };
    if page == 0
        || bytes == 0
        || !bytes.is_multiple_of(page)
        || !(table as usize).is_multiple_of(page)
    {
        return;
    }
    // SAFETY: whole pages that hold the table alone, per the caller; nothing writes it after
    // this point (the loader runs once, from the program's first constructor).
    if unsafe { libc::mprotect(table, bytes, libc::PROT_READ) } == 0 {
        SEALED.store(true, Ordering::Release);
    }
}

unsafe fn try_load_runtime(
    names: *const *const core::ffi::c_char,
    table: *mut *const core::ffi::c_void,
    n: usize,
) -> Result<(), String> {
    let dir = std::env::var_os("OFFLOAD_RUNTIME_DIR").map(std::path::PathBuf::from);
    let install = "this program needs LLVM 19's: install Debian's libomp5-19 as root with \
                   `apt-get install libomp5-19` or `./x.py setup`, or point OFFLOAD_RUNTIME_DIR \
                   at a folder holding libomptarget.so.19.1 and libomp.so.5";
    let mut handle = core::ptr::null_mut();
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
        handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if handle.is_null() {
            return Err(format!(
                "cannot load the offload runtime ({}){} ({install})",
                last_dl_error(),
                other_versions(dir.as_deref())
            ));
        }
    }
    for i in 0..n {
        // SAFETY: per the caller, `names` holds `n` C strings and `table` `n` slots.
        unsafe {
            let name = *names.add(i);
            let address = libc::dlsym(handle, name);
            if address.is_null() {
                let name = core::ffi::CStr::from_ptr(name).to_string_lossy();
                return Err(format!(
                    "the offload runtime has no `{name}`: it is not the version this program \
                     was built for ({install})"
                ));
            }
            *table.add(i) = address;
        }
    }
    Ok(())
}

/// The dynamic loader's message for the last failure.
fn last_dl_error() -> String {
    // SAFETY: dlerror returns the message of the last failure, or null.
    unsafe {
        let text = libc::dlerror();
        if text.is_null() {
            "not found".to_owned()
        } else {
            core::ffi::CStr::from_ptr(text).to_string_lossy().into_owned()
        }
    }
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
