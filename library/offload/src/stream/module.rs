//! The library's CUDA module of a GPU: the program's kernels, loaded from the embedded PTX or
//! cubin (`OFFLOAD_CUDA_MODULE`).

use std::sync::OnceLock;

use crate::Error;
use crate::cuda::{Api, CuModule};

/// The embedded cubin and the PTX it was assembled from, as the offload lowering defines them
/// (null and 0 when the program embeds no NVIDIA image; the PTX null when it embeds none).
#[derive(Clone, Copy)]
pub struct CudaImage {
    pub(crate) ptr: *const u8,
    pub(crate) len: i64,
    pub(crate) ptx: *const core::ffi::c_char,
}

impl CudaImage {
    /// The embedded cubin, where the program has one.
    pub fn cubin(&self) -> Option<&'static [u8]> {
        // SAFETY: the lowering points `ptr` at the `len` bytes of the embedded cubin.
        (!self.ptr.is_null() && self.len > 0)
            .then(|| unsafe { core::slice::from_raw_parts(self.ptr, self.len as usize) })
    }

    /// The embedded PTX, where the program has it.
    pub fn ptx(&self) -> Option<&'static core::ffi::CStr> {
        // SAFETY: the lowering points `ptx` at NUL-terminated text that lives as long as the
        // program.
        (!self.ptx.is_null()).then(|| unsafe { core::ffi::CStr::from_ptr(self.ptx) })
    }

    /// Whether the PTX is for an arch-specific target (`.target sm_90a`): its cubin is then a
    /// stub whose functions trap (what libomptarget 19 registers), and the kernels run from
    /// the PTX alone.
    pub fn arch_specific(&self) -> bool {
        self.ptx().is_some_and(|ptx| arch_specific_target(ptx.to_bytes()))
    }
}

/// Whether the `.target` directive of `ptx` names an arch-specific target (`sm_90a`).
fn arch_specific_target(ptx: &[u8]) -> bool {
    let line = ptx.split(|&b| b == b'\n').find(|line| line.starts_with(b".target "));
    line.and_then(|line| line[8..].split(|&b| b == b',' || b.is_ascii_whitespace()).next())
        .is_some_and(|target| target.starts_with(b"sm_") && target.ends_with(b"a"))
}

/// What the library's CUDA module of a GPU is loaded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleSource {
    /// The embedded PTX, compiled by the CUDA driver for the GPU it runs on.
    Ptx,
    /// The embedded cubin, assembled at build time (by CUDA 11.8's ptxas, for libomptarget 19).
    Cubin,
}

/// The source `OFFLOAD_CUDA_MODULE` asks for: `ptx` (the default) or `cubin` (read once).
///
/// The PTX by default: the driver's compiler is as new as the driver, where the cubin's ptxas
/// must be CUDA 11.8's, whose cubins libomptarget 19 loads. On an H200 with driver 580 a saxpy
/// compiled by the driver ran 1% faster than the same PTX assembled by ptxas 11.8 (11.81 ms
/// against 11.93 ms for 50 launches, as fast as ptxas 13.0's). The driver compiles a module
/// once (its cache keeps the result), on the first launch.
fn preferred_source() -> ModuleSource {
    static SOURCE: OnceLock<ModuleSource> = OnceLock::new();
    *SOURCE.get_or_init(|| {
        let value = std::env::var_os("OFFLOAD_CUDA_MODULE").unwrap_or_default();
        match value.to_string_lossy().to_ascii_lowercase().as_str() {
            "" | "ptx" => ModuleSource::Ptx,
            "cubin" => ModuleSource::Cubin,
            _ => {
                eprintln!(
                    "offload: warning: OFFLOAD_CUDA_MODULE={} is not ptx or cubin (using ptx)",
                    value.to_string_lossy()
                );
                ModuleSource::Ptx
            }
        }
    })
}

/// Loads the library's CUDA module of the current context: from the PTX, or from the cubin
/// where the program embeds no PTX, `OFFLOAD_CUDA_MODULE=cubin` asks for it, or the driver
/// cannot compile the PTX (a driver older than the PTX's version, say), which is said once on
/// stderr. The cubin's error is the one returned. An arch-specific image (sm_90a) loads from
/// its PTX alone: its cubin's functions trap.
///
/// # Safety
/// `image` must be the lowering's complete cubin and NUL-terminated PTX (or null PTX); a
/// context must be current.
pub(super) unsafe fn load_module(
    api: &Api,
    image: CudaImage,
) -> Result<(CuModule, ModuleSource), Error> {
    // SAFETY: per the caller, `load` is handed the cubin or the PTX.
    load_preferring(&image, preferred_source(), |bytes| unsafe { api.load_module(bytes) })
}

/// [`load_module`]'s choice, over `load` (the driver's `cuModuleLoadData`).
fn load_preferring(
    image: &CudaImage,
    preferred: ModuleSource,
    load: impl Fn(*const u8) -> Result<CuModule, Error>,
) -> Result<(CuModule, ModuleSource), Error> {
    if image.arch_specific() {
        if preferred == ModuleSource::Cubin {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "offload: warning: OFFLOAD_CUDA_MODULE=cubin, but the program's image is for \
                     an arch-specific GPU (sm_90a): its kernels run from the PTX"
                )
            });
        }
        return Ok((load(image.ptx.cast())?, ModuleSource::Ptx));
    }
    if !image.ptx.is_null() && preferred == ModuleSource::Ptx {
        match load(image.ptx.cast()) {
            Ok(module) => return Ok((module, ModuleSource::Ptx)),
            Err(e) => {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    eprintln!(
                        "offload: warning: the CUDA driver did not compile the program's PTX \
                         ({e}); its kernels run from the cubin (OFFLOAD_CUDA_MODULE=cubin \
                         says so without trying)"
                    )
                });
            }
        }
    }
    Ok((load(image.ptr)?, ModuleSource::Cubin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_comes_from_the_ptx_or_else_the_cubin() {
        let (cubin, ptx) = ([0x7fu8, b'E', b'L', b'F'], c".version 8.0");
        let image = CudaImage { ptr: cubin.as_ptr(), len: 4, ptx: ptx.as_ptr() };
        let refused =
            || Error::Cuda { call: "cuModuleLoadData", code: 218, message: "invalid PTX" };
        let module = |bytes: *const u8| bytes.cast_mut().cast::<cudarc::driver::sys::CUmod_st>();
        let tried = std::cell::RefCell::new(Vec::new());
        // The driver compiles the PTX: the module is the PTX's, the cubin untouched.
        let driver = |ptx_ok: bool, cubin_ok: bool| {
            let tried = &tried;
            move |bytes: *const u8| {
                let is_ptx = bytes == ptx.as_ptr().cast();
                tried.borrow_mut().push(if is_ptx { "ptx" } else { "cubin" });
                if (is_ptx && ptx_ok) || (!is_ptx && cubin_ok) {
                    Ok(module(bytes))
                } else {
                    Err(refused())
                }
            }
        };
        let got = load_preferring(&image, ModuleSource::Ptx, driver(true, true)).unwrap();
        assert_eq!((got.1, tried.take()), (ModuleSource::Ptx, vec!["ptx"]));
        // It does not: the cubin, after the PTX was tried.
        let got = load_preferring(&image, ModuleSource::Ptx, driver(false, true)).unwrap();
        assert_eq!((got.1, tried.take()), (ModuleSource::Cubin, vec!["ptx", "cubin"]));
        assert_eq!(got.0, module(cubin.as_ptr()));
        // Neither loads: the cubin's error.
        let e = load_preferring(&image, ModuleSource::Ptx, driver(false, false)).unwrap_err();
        assert_eq!((e, tried.take()), (refused(), vec!["ptx", "cubin"]));
        // The cubin asked for, or no PTX embedded: the PTX is not tried.
        let got = load_preferring(&image, ModuleSource::Cubin, driver(true, true)).unwrap();
        assert_eq!((got.1, tried.take()), (ModuleSource::Cubin, vec!["cubin"]));
        let no_ptx = CudaImage { ptx: core::ptr::null(), ..image };
        let got = load_preferring(&no_ptx, ModuleSource::Ptx, driver(true, true)).unwrap();
        assert_eq!((got.1, tried.take()), (ModuleSource::Cubin, vec!["cubin"]));
    }

    #[test]
    fn an_arch_specific_image_loads_from_its_ptx_alone() {
        let (cubin, ptx) = ([0x7fu8, b'E', b'L', b'F'], c"//\n.version 8.0\n.target sm_90a\n");
        let image = CudaImage { ptr: cubin.as_ptr(), len: 4, ptx: ptx.as_ptr() };
        assert!(image.arch_specific());
        let tried = std::cell::RefCell::new(Vec::new());
        let driver = |ok: bool| {
            let tried = &tried;
            move |bytes: *const u8| {
                tried.borrow_mut().push(bytes == ptx.as_ptr().cast());
                if ok {
                    Ok(bytes.cast_mut().cast::<cudarc::driver::sys::CUmod_st>())
                } else {
                    Err(Error::Cuda { call: "cuModuleLoadData", code: 218, message: "invalid PTX" })
                }
            }
        };
        for preferred in [ModuleSource::Ptx, ModuleSource::Cubin] {
            let got = load_preferring(&image, preferred, driver(true)).unwrap();
            assert_eq!((got.1, tried.take()), (ModuleSource::Ptx, vec![true]));
        }
        // The driver cannot compile it: its error, and never the stub.
        assert!(load_preferring(&image, ModuleSource::Ptx, driver(false)).is_err());
        assert_eq!(tried.take(), vec![true]);
        for plain in [c".version 7.8\n.target sm_90\n", c".target sm_90, debug\n", c""] {
            assert!(!CudaImage { ptx: plain.as_ptr(), ..image }.arch_specific());
        }
        assert!(CudaImage { ptx: c".target sm_100a, debug".as_ptr(), ..image }.arch_specific());
    }
}
