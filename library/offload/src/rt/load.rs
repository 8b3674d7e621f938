//! The runtime loaded at start-up: libomp and libomptarget opened with `dlopen`, the program's
//! table of runtime functions filled with `dlsym` and made read-only.

use core::sync::atomic::{AtomicBool, Ordering};

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
