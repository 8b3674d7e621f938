//! The library's state of each GPU: its context, stream, module and kernels, opened on the first
//! launch there.

use core::ffi::{c_int, c_void};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Mutex, OnceLock};

use super::module::{CudaImage, ModuleSource, load_module};
use super::pending::{self, MAX_GPUS};
use crate::cuda::{self, Api, CuContext, CuFunction, CuMemPool, CuModule, CuStream};
use crate::geometry::Geometry;
use crate::{Error, rt};

/// What a GPU's memory pool keeps of what is given back to it, across waits.
///
/// A synchronous launch allocates device memory for its plain arguments and frees it after its
/// wait. With `cuMemAlloc` and `cuMemFree` the driver gives the memory back to the system when
/// the last small allocation goes, and maps it again for the next one: on an H200, 37-40 us for
/// that free and 46-48 us for that allocation, two thirds of a launch of 16 KiB arguments
/// (against 2-4 us while another allocation stays). The pool keeps up to this much mapped; the
/// room check gives it back before it refuses a mapping ([`trim_pool`]).
const POOL_KEEPS: u64 = 64 << 20;

/// A GPU's stream, its memory pool, its module (the program's kernels, loaded once more by the
/// library on the first launch: see [`load_module`]) and its kernels by name.
pub(super) struct Gpu {
    pub(super) api: &'static Api,
    pub(super) context: CuContext,
    pub(super) stream: CuStream,
    /// Where synchronous launches allocate their arguments' device memory; `None` on a GPU
    /// without memory pools, which allocates with `cuMemAlloc`.
    pool: Option<CuMemPool>,
    module: OnceLock<Result<(CuModule, ModuleSource), Error>>,
    functions: Mutex<HashMap<&'static str, CuFunction>>,
}

// SAFETY: driver handles may be used from any thread; the map is behind a mutex.
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

static GPUS: [OnceLock<Result<Gpu, Error>>; MAX_GPUS] = [const { OnceLock::new() }; MAX_GPUS];
impl Gpu {
    fn open(ordinal: usize) -> Result<Gpu, Error> {
        let api = cuda::api().ok_or(Error::NoDevice)?;
        let context = api.primary_context(ordinal as c_int)?;
        let (stream, pool) = api.with_context(context, || {
            let stream = api.create_stream()?;
            let pool = api.create_pool(ordinal as c_int, POOL_KEEPS).ok();
            // The pool's first allocation sets up the driver's stream-ordered allocator (11 ms
            // on an H200): made here, with the GPU's other start-up work, not in a launch. Where
            // it fails (a full GPU), the first launch that allocates sets it up.
            if let Some(first) = pool.and_then(|pool| api.alloc_from(pool, 1, stream).ok()) {
                // SAFETY: just allocated, used by nothing.
                let _ = unsafe { api.free_async(first, stream) };
            }
            // The runtime allocates a preload's device memory with `cuMemAlloc` and frees it at
            // the drop, so a program that preloads small data again and again pays the unmapping
            // and mapping again (see `POOL_KEEPS`) whenever its last preload ends. One byte
            // allocated for the process's life keeps that memory mapped (never freed: it goes
            // with the context at exit). Best effort: a full GPU only loses the saving.
            let _ = api.alloc(1);
            Ok((stream, pool))
        })?;
        pending::opened(ordinal, api, context, stream, api.waits_block(ordinal as c_int));
        Ok(Gpu {
            api,
            context,
            stream,
            pool,
            module: OnceLock::new(),
            functions: Mutex::new(HashMap::new()),
        })
    }

    /// `bytes` of device memory for the work enqueued on the stream from now on, in the GPU's
    /// context (current): from the pool, or where there is none from `cuMemAlloc`.
    pub(super) fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        match self.pool {
            Some(pool) => self.api.alloc_from(pool, bytes, self.stream),
            None => self.api.alloc(bytes),
        }
    }

    /// Gives back memory from [`alloc`](Self::alloc), in the GPU's context (current).
    ///
    /// # Safety
    /// `address` must be from [`alloc`](Self::alloc), freed once, after a wait for the stream
    /// that covers all the work that used it.
    pub(super) unsafe fn free(&self, address: u64) -> Result<(), Error> {
        // SAFETY: per the caller.
        unsafe {
            match self.pool {
                Some(_) => self.api.free_async(address, self.stream),
                None => self.api.free(address),
            }
        }
    }

    /// Enqueues `function` with parameter `values` (8 bytes each, as the entry declares them)
    /// on the stream, in the GPU's context (current).
    ///
    /// # Safety
    /// One value per entry parameter; every device address among them must stay allocated
    /// until the kernel ends.
    pub(super) unsafe fn enqueue_kernel(
        &self,
        function: CuFunction,
        geometry: &Geometry,
        mut values: Vec<u64>,
    ) -> Result<(), Error> {
        let mut params: Vec<*mut c_void> =
            values.iter_mut().map(|v| (v as *mut u64).cast::<c_void>()).collect();
        // SAFETY: per the caller.
        unsafe {
            self.api.launch(
                function,
                geometry.grid,
                geometry.block,
                geometry.shared,
                self.stream,
                &mut params,
            )
        }
    }

    pub(super) fn function(
        &self,
        image: CudaImage,
        kernel: &'static str,
    ) -> Result<CuFunction, Error> {
        let (module, _) = *self
            .module
            .get_or_init(|| {
                self.api.with_context(self.context, || {
                    // SAFETY: the lowering points the image at the embedded cubin, which is
                    // complete, and its PTX, NUL-terminated.
                    unsafe { load_module(self.api, image) }
                })
            })
            .as_ref()
            .map_err(Clone::clone)?;
        let mut functions = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&f) = functions.get(kernel) {
            return Ok(f);
        }
        let name = CString::new(kernel).expect("kernel names are Rust identifiers");
        let f = self.api.function(module, &name)?;
        functions.insert(kernel, f);
        Ok(f)
    }
}

/// What the library's module on runtime device `device` (-1: the default) was loaded from,
/// once a launch has opened it; `None` before, and for devices that are not the library's GPUs
/// (for tests).
pub fn cuda_module_source(device: i64) -> Option<ModuleSource> {
    let id = usize::try_from(rt::resolve_device(device).ok()?).ok()?;
    let gpu = GPUS.get(rt::gpu_ordinal(id)?)?.get()?.as_ref().ok()?;
    gpu.module.get()?.as_ref().ok().map(|&(_, source)| source)
}

/// The GPU of CUDA ordinal `ordinal`, opened on first use.
pub(super) fn gpu(ordinal: usize) -> Result<&'static Gpu, Error> {
    GPUS[ordinal].get_or_init(|| Gpu::open(ordinal)).as_ref().map_err(Clone::clone)
}

/// Gives the memory GPU `ordinal`'s pool keeps, and nothing uses, back to the system, after a
/// wait for the stream (a free is done once the stream has passed it); whether it was trimmed
/// (false where the GPU is not opened, has no pool, or the wait or the trim failed).
pub(crate) fn trim_pool(ordinal: usize) -> bool {
    let Some(Ok(gpu)) = GPUS.get(ordinal).and_then(OnceLock::get) else { return false };
    let Some(pool) = gpu.pool else { return false };
    pending::wait_stream(ordinal).is_ok()
        && gpu.api.with_context(gpu.context, || gpu.api.trim_pool(pool)).is_ok()
}

/// Where a launch on runtime device `device` (-1: the default) can be enqueued: the runtime's
/// number for the device and its CUDA ordinal (`rt::gpu_ordinal`: the GPUs that can run the
/// cubin, numbered first). `None` (run through the runtime) for the host-offload plugin's
/// devices, without a cubin, and for GPUs beyond the library's table ([`MAX_GPUS`]), where a
/// launch the runtime cannot make as asked (along y or z, or with shared memory: libomptarget
/// 19 launches along x only) is refused rather than made wrong.
pub(super) fn cuda_ordinal(
    image: CudaImage,
    device: i64,
    kernel: &'static str,
    geometry: &Geometry,
) -> Result<Option<(usize, usize)>, Error> {
    if image.ptr.is_null() || image.len <= 0 {
        return Ok(None);
    }
    let Some(id) = rt::resolve_device(device).ok().and_then(|d| usize::try_from(d).ok()) else {
        return Ok(None);
    };
    let Some(ordinal) = rt::gpu_ordinal(id) else { return Ok(None) };
    beyond_table(ordinal, kernel, geometry, || image.arch_specific())
        .map(|()| (ordinal < MAX_GPUS).then_some((id, ordinal)))
}

/// Refuses a launch on a GPU beyond the library's table that only the library can make: one
/// along y or z or with shared memory, and any of an arch-specific image (`arch_specific`,
/// asked only there: it reads the PTX), whose cubin, all the runtime has, is a stub.
fn beyond_table(
    ordinal: usize,
    kernel: &'static str,
    geometry: &Geometry,
    arch_specific: impl FnOnce() -> bool,
) -> Result<(), Error> {
    if ordinal < MAX_GPUS {
        return Ok(());
    }
    if arch_specific() {
        return Err(Error::InvalidGeometry {
            kernel,
            reason: "GPUs of CUDA ordinal 64 and above launch through libomptarget 19, which \
                     has no kernels of an sm_90a image (its cubin is a stub): use a GPU of a \
                     lower CUDA ordinal",
        });
    }
    if !geometry.is_linear() {
        return Err(Error::InvalidGeometry {
            kernel,
            reason: "GPUs of CUDA ordinal 64 and above launch through libomptarget 19's \
                     __tgt_target_kernel, which launches along x only and without shared \
                     memory: launch so on this GPU, or use one of a lower CUDA ordinal",
        });
    }
    Ok(())
}

/// The library's stream on runtime device `device` (-1: the default), with its driver and
/// context, where the device is a GPU within the library's table; `None` for the host-offload
/// plugin's devices (and GPUs beyond the table), whose launches are synchronous.
pub(crate) fn device_stream(
    device: i64,
) -> Result<Option<(&'static Api, CuContext, CuStream)>, Error> {
    Ok(device_gpu(device)?.map(|(_, gpu)| (gpu.api, gpu.context, gpu.stream)))
}

/// The GPU of runtime device `device` (-1: the default) and its CUDA ordinal, opened on first
/// use, where the device is a GPU within the library's table; `None` for the host-offload
/// plugin's devices and GPUs beyond the table.
pub(super) fn device_gpu(device: i64) -> Result<Option<(usize, &'static Gpu)>, Error> {
    let id = rt::resolve_device(device)?;
    let Some(ordinal) = usize::try_from(id).ok().and_then(rt::gpu_ordinal) else {
        return Ok(None);
    };
    if ordinal >= MAX_GPUS {
        return Ok(None);
    }
    Ok(Some((ordinal, gpu(ordinal)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_beyond_the_table_refuses_what_only_the_library_can_launch() {
        let linear = Geometry { grid: [64, 1, 1], block: [256, 1, 1], shared: 0 };
        let planar = Geometry { grid: [8, 8, 1], ..linear };
        let shared = Geometry { shared: 1024, ..linear };
        for ordinal in [0, MAX_GPUS - 1, MAX_GPUS, MAX_GPUS + 7] {
            assert!(beyond_table(ordinal, "k", &linear, || false).is_ok());
        }
        for geometry in [planar, shared] {
            assert!(beyond_table(MAX_GPUS - 1, "k", &geometry, || false).is_ok());
            let e = beyond_table(MAX_GPUS, "k", &geometry, || false).unwrap_err().to_string();
            assert!(
                e.starts_with("invalid launch geometry for kernel `k`: GPUs of CUDA ordinal 64"),
                "{e}"
            );
        }
        // An sm_90a image's kernels are the library's alone, whatever the geometry.
        assert!(beyond_table(MAX_GPUS - 1, "k", &linear, || unreachable!("PTX read")).is_ok());
        let e = beyond_table(MAX_GPUS, "k", &linear, || true).unwrap_err().to_string();
        assert!(e.contains("no kernels of an sm_90a image"), "{e}");
    }
}
