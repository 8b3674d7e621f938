//! The CUDA driver API, loaded with `dlopen("libcuda.so")` (as libomptarget 19 loads it) once
//! per process: the one place the
//! library calls the driver directly (device names, and the streams of `launch_async!`).
//!
//! Raw entry points live in [`Api`] (looked up by their documented names); the methods below are
//! one checked call each, returning the driver's failure as [`Error::Cuda`]. A program without a
//! driver (no GPU) gets `None` from [`api`] and never calls any of it.

use core::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

use crate::{Error, sys};

/// `CUresult`: 0 is `CUDA_SUCCESS`.
pub(crate) type CuResult = c_int;
/// `CUdevice`: an ordinal-like handle.
pub(crate) type CuDevice = c_int;
/// `CUcontext`, `CUmodule`, `CUfunction`, `CUstream`: opaque driver handles.
pub(crate) type CuContext = *mut c_void;
pub(crate) type CuModule = *mut c_void;
pub(crate) type CuFunction = *mut c_void;
pub(crate) type CuStream = *mut c_void;
pub(crate) type CuEvent = *mut c_void;
pub(crate) type CuMemPool = *mut c_void;

/// `CU_CTX_SCHED_*`: how a thread waits for the GPU in a context (`cuda.h`; `BLOCKING_SYNC`
/// is what libomptarget sets when left alone), and the mask of a context's flags they take.
pub(crate) const CU_CTX_SCHED_AUTO: c_uint = 0x0;
pub(crate) const CU_CTX_SCHED_SPIN: c_uint = 0x1;
pub(crate) const CU_CTX_SCHED_YIELD: c_uint = 0x2;
const CU_CTX_SCHED_BLOCKING_SYNC: c_uint = 0x4;
const CU_CTX_SCHED_MASK: c_uint = 0x7;

/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: how much dynamic shared memory a
/// kernel's launches may ask for, beyond the default.
const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
/// Dynamic shared memory every kernel may have without asking (48 KiB).
const DEFAULT_SHARED: u32 = 48 << 10;

/// `CU_STREAM_NON_BLOCKING`: the stream does not synchronise with the legacy default stream.
pub(crate) const CU_STREAM_NON_BLOCKING: c_uint = 0x1;

/// `CUDA_ERROR_OUT_OF_MEMORY`.
const CUDA_ERROR_OUT_OF_MEMORY: CuResult = 2;

/// `CU_EVENT_DISABLE_TIMING`: an event only waited for.
const CU_EVENT_DISABLE_TIMING: c_uint = 0x2;
/// `CU_EVENT_BLOCKING_SYNC`: a wait for the event sleeps instead of spinning.
const CU_EVENT_BLOCKING_SYNC: c_uint = 0x1;

/// `CUmemPoolProps` (CUDA 11.2; later versions name parts of `reserved`, which stay 0 here:
/// their defaults).
#[repr(C)]
struct MemPoolProps {
    /// `CU_MEM_ALLOCATION_TYPE_PINNED` (1).
    alloc_type: c_int,
    /// `CU_MEM_HANDLE_TYPE_NONE` (0).
    handle_types: c_int,
    /// `CUmemLocation`: `CU_MEM_LOCATION_TYPE_DEVICE` (1) and the ordinal.
    location: [c_int; 2],
    win32_security_attributes: *mut c_void,
    reserved: [u8; 64],
}

/// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`: the memory a pool keeps at a synchronisation.
const CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: c_int = 4;

/// The driver's entry points, with the signatures of `cuda.h` (CUDA 11.2 and later; the `_v2`
/// names are the ones `cuda.h` maps the plain names to).
pub(crate) struct Api {
    pub(crate) device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    pub(crate) device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    pub(crate) device_get_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    /// `cuDeviceGetAttribute(int *value, CUdevice_attribute, CUdevice)`
    device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    /// `cuDevicePrimaryCtxRetain(CUcontext*, CUdevice)`: the context libomptarget's CUDA
    /// plugin uses too, so device addresses of its mappings are valid in it.
    primary_ctx_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    /// `cuDevicePrimaryCtxGetState(CUdevice, unsigned *flags, int *active)`
    primary_ctx_get_state: unsafe extern "C" fn(CuDevice, *mut c_uint, *mut c_int) -> CuResult,
    /// `cuDevicePrimaryCtxSetFlags(CUdevice, unsigned flags)`
    primary_ctx_set_flags: unsafe extern "C" fn(CuDevice, c_uint) -> CuResult,
    /// `cuMemGetInfo(size_t *free, size_t *total)`, in the current context.
    mem_get_info: unsafe extern "C" fn(*mut usize, *mut usize) -> CuResult,
    ctx_push_current: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_pop_current: unsafe extern "C" fn(*mut CuContext) -> CuResult,
    module_load_data: unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
    stream_create: unsafe extern "C" fn(*mut CuStream, c_uint) -> CuResult,
    stream_synchronize: unsafe extern "C" fn(CuStream) -> CuResult,
    /// `cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, stream,
    /// kernelParams, extra)`
    #[allow(clippy::type_complexity)]
    launch_kernel: unsafe extern "C" fn(
        CuFunction,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        CuStream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    /// `cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t bytes, CUstream)`
    memcpy_htod_async: unsafe extern "C" fn(u64, *const c_void, usize, CuStream) -> CuResult,
    /// `cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes, CUstream)`
    memcpy_dtoh_async: unsafe extern "C" fn(*mut c_void, u64, usize, CuStream) -> CuResult,
    /// `cuMemAlloc(CUdeviceptr*, size_t bytes)`, in the current context.
    mem_alloc: unsafe extern "C" fn(*mut u64, usize) -> CuResult,
    /// `cuMemFree(CUdeviceptr)`
    mem_free: unsafe extern "C" fn(u64) -> CuResult,
    /// `cuMemPoolCreate(CUmemoryPool*, const CUmemPoolProps*)`
    mem_pool_create: unsafe extern "C" fn(*mut CuMemPool, *const MemPoolProps) -> CuResult,
    /// `cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute, void *value)`
    mem_pool_set_attribute: unsafe extern "C" fn(CuMemPool, c_int, *mut c_void) -> CuResult,
    /// `cuMemPoolTrimTo(CUmemoryPool, size_t minBytesToKeep)`
    mem_pool_trim_to: unsafe extern "C" fn(CuMemPool, usize) -> CuResult,
    /// `cuMemAllocFromPoolAsync(CUdeviceptr*, size_t bytes, CUmemoryPool, CUstream)`
    mem_alloc_from_pool_async:
        unsafe extern "C" fn(*mut u64, usize, CuMemPool, CuStream) -> CuResult,
    /// `cuMemFreeAsync(CUdeviceptr, CUstream)`
    mem_free_async: unsafe extern "C" fn(u64, CuStream) -> CuResult,
    /// `cuEventCreate(CUevent*, unsigned flags)`
    event_create: unsafe extern "C" fn(*mut CuEvent, c_uint) -> CuResult,
    /// `cuEventRecord(CUevent, CUstream)`
    event_record: unsafe extern "C" fn(CuEvent, CuStream) -> CuResult,
    event_synchronize: unsafe extern "C" fn(CuEvent) -> CuResult,
    /// `cuEventElapsedTime(float *ms, CUevent start, CUevent end)`
    event_elapsed_time: unsafe extern "C" fn(*mut f32, CuEvent, CuEvent) -> CuResult,
    event_destroy: unsafe extern "C" fn(CuEvent) -> CuResult,
    /// `cuFuncSetAttribute(CUfunction, CUfunction_attribute, int)`
    func_set_attribute: unsafe extern "C" fn(CuFunction, c_int, c_int) -> CuResult,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
}

/// The driver, loaded and initialised (`cuInit(0)`) on first use; `None` without one.
pub(crate) fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: the symbols are looked up by their documented names and given the documented
        // signatures (CUDA driver API); a missing library or symbol gives None.
        unsafe { load() }
    })
    .as_ref()
}

// Each transmute's target is the type of the `Api` field it initialises, spelled out there.
#[allow(clippy::missing_transmute_annotations)]
unsafe fn load() -> Option<Api> {
    // SAFETY (of every call here): see `api`.
    unsafe {
        // The one name libomptarget 19's CUDA plugin loads: where it finds no driver, the
        // library must not see GPUs either, or it would number devices the runtime does not.
        let lib = sys::dlopen(c"libcuda.so".as_ptr(), sys::RTLD_LAZY);
        if lib.is_null() {
            return None;
        }
        let sym = |name: &CStr| -> Option<*mut c_void> {
            let p = sys::dlsym(lib, name.as_ptr());
            (!p.is_null()).then_some(p)
        };
        macro_rules! entry {
            ($name:literal) => {
                core::mem::transmute::<*mut c_void, _>(sym($name)?)
            };
        }
        let init: unsafe extern "C" fn(c_uint) -> CuResult = entry!(c"cuInit");
        let api = Api {
            device_get_count: entry!(c"cuDeviceGetCount"),
            device_get: entry!(c"cuDeviceGet"),
            device_get_name: entry!(c"cuDeviceGetName"),
            device_get_attribute: entry!(c"cuDeviceGetAttribute"),
            primary_ctx_retain: entry!(c"cuDevicePrimaryCtxRetain"),
            primary_ctx_get_state: entry!(c"cuDevicePrimaryCtxGetState"),
            primary_ctx_set_flags: entry!(c"cuDevicePrimaryCtxSetFlags_v2"),
            mem_get_info: entry!(c"cuMemGetInfo_v2"),
            ctx_push_current: entry!(c"cuCtxPushCurrent_v2"),
            ctx_pop_current: entry!(c"cuCtxPopCurrent_v2"),
            module_load_data: entry!(c"cuModuleLoadData"),
            module_get_function: entry!(c"cuModuleGetFunction"),
            stream_create: entry!(c"cuStreamCreate"),
            stream_synchronize: entry!(c"cuStreamSynchronize"),
            launch_kernel: entry!(c"cuLaunchKernel"),
            memcpy_htod_async: entry!(c"cuMemcpyHtoDAsync_v2"),
            memcpy_dtoh_async: entry!(c"cuMemcpyDtoHAsync_v2"),
            mem_alloc: entry!(c"cuMemAlloc_v2"),
            mem_free: entry!(c"cuMemFree_v2"),
            mem_pool_create: entry!(c"cuMemPoolCreate"),
            mem_pool_set_attribute: entry!(c"cuMemPoolSetAttribute"),
            mem_pool_trim_to: entry!(c"cuMemPoolTrimTo"),
            mem_alloc_from_pool_async: entry!(c"cuMemAllocFromPoolAsync"),
            mem_free_async: entry!(c"cuMemFreeAsync"),
            event_create: entry!(c"cuEventCreate"),
            event_record: entry!(c"cuEventRecord"),
            event_synchronize: entry!(c"cuEventSynchronize"),
            event_elapsed_time: entry!(c"cuEventElapsedTime"),
            event_destroy: entry!(c"cuEventDestroy_v2"),
            func_set_attribute: entry!(c"cuFuncSetAttribute"),
            get_error_string: entry!(c"cuGetErrorString"),
        };
        if init(0) != 0 {
            return None;
        }
        Some(api)
    }
}

impl Api {
    /// `Ok` for `CUDA_SUCCESS`, else [`Error::Cuda`] naming the call and the driver's message.
    pub(crate) fn check(&self, call: &'static str, result: CuResult) -> Result<(), Error> {
        if result == 0 {
            return Ok(());
        }
        let mut text: *const c_char = core::ptr::null();
        // SAFETY: the driver writes a pointer to a static, NUL-terminated string, or leaves it
        // null; the strings live as long as the driver, which is never unloaded.
        let message = unsafe {
            if (self.get_error_string)(result, &mut text) == 0 && !text.is_null() {
                CStr::from_ptr(text).to_str().unwrap_or("unknown CUDA error")
            } else {
                "unknown CUDA error"
            }
        };
        Err(Error::Cuda { call, code: result, message })
    }

    /// GPUs the driver reports.
    pub(crate) fn device_count(&self) -> usize {
        let mut n = 0;
        // SAFETY: the driver writes one int.
        let ok = unsafe { (self.device_get_count)(&mut n) } == 0;
        if ok { usize::try_from(n).unwrap_or(0) } else { 0 }
    }

    /// GPU `ordinal`'s compute capability, `(major, minor)`.
    pub(crate) fn compute_capability(&self, ordinal: c_int) -> Option<(u32, u32)> {
        // `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` and `_MINOR`.
        const MAJOR: c_int = 75;
        const MINOR: c_int = 76;
        Some((self.attribute(ordinal, MAJOR)?, self.attribute(ordinal, MINOR)?))
    }

    /// GPU `ordinal`'s multiprocessors.
    pub(crate) fn multiprocessor_count(&self, ordinal: c_int) -> Option<u32> {
        // `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
        const MULTIPROCESSORS: c_int = 16;
        self.attribute(ordinal, MULTIPROCESSORS)
    }

    /// A `CU_DEVICE_ATTRIBUTE_*` of GPU `ordinal`.
    fn attribute(&self, ordinal: c_int, attribute: c_int) -> Option<u32> {
        let (mut device, mut value) = (0, 0);
        // SAFETY: the driver writes one value each.
        unsafe {
            if (self.device_get)(&mut device, ordinal) != 0
                || (self.device_get_attribute)(&mut value, attribute, device) != 0
            {
                return None;
            }
        }
        u32::try_from(value).ok()
    }

    /// The primary context of GPU `ordinal`, retained once per process (never released: it
    /// lives as long as the process, as libomptarget's does) and kept for later calls.
    pub(crate) fn primary_context(&self, ordinal: c_int) -> Result<CuContext, Error> {
        /// Retained contexts by ordinal, as addresses (driver handles may be used from any
        /// thread); a failed retain is not kept, so a later call tries again.
        static RETAINED: [OnceLock<usize>; 64] = [const { OnceLock::new() }; 64];
        let slot = usize::try_from(ordinal).ok().and_then(|o| RETAINED.get(o));
        if let Some(&context) = slot.and_then(OnceLock::get) {
            return Ok(context as CuContext);
        }
        let (mut device, mut context) = (0, core::ptr::null_mut());
        // SAFETY: the driver writes one handle each.
        unsafe {
            self.check("cuDeviceGet", (self.device_get)(&mut device, ordinal))?;
            self.check(
                "cuDevicePrimaryCtxRetain",
                (self.primary_ctx_retain)(&mut context, device),
            )?;
        }
        Ok(slot.map_or(context, |slot| *slot.get_or_init(|| context as usize) as CuContext))
    }

    /// Gives GPU `ordinal`'s primary context the wait mode `sched` (a `CU_CTX_SCHED_*`) and
    /// activates it, unless something activated it before: the flags of an active context are
    /// left as they are. Returns whether this call set them.
    pub(crate) fn activate_primary_context(
        &self,
        ordinal: c_int,
        sched: c_uint,
    ) -> Result<bool, Error> {
        let (mut device, mut flags, mut active) = (0, 0, 0);
        // SAFETY: the driver writes one value each.
        unsafe {
            self.check("cuDeviceGet", (self.device_get)(&mut device, ordinal))?;
            self.check(
                "cuDevicePrimaryCtxGetState",
                (self.primary_ctx_get_state)(device, &mut flags, &mut active),
            )?;
            if active != 0 {
                return Ok(false);
            }
            self.check("cuDevicePrimaryCtxSetFlags", (self.primary_ctx_set_flags)(device, sched))?;
        }
        self.primary_context(ordinal)?;
        Ok(true)
    }

    /// Free and total bytes of memory of the GPU whose context is current.
    pub(crate) fn memory_info(&self) -> Result<(usize, usize), Error> {
        let (mut free, mut total) = (0, 0);
        // SAFETY: the driver writes two sizes; a context is current (callers' duty).
        self.check("cuMemGetInfo", unsafe { (self.mem_get_info)(&mut free, &mut total) })?;
        Ok((free, total))
    }

    /// Runs `f` with `context` current on this thread, restoring the previous one after.
    pub(crate) fn with_context<R>(
        &self,
        context: CuContext,
        f: impl FnOnce() -> Result<R, Error>,
    ) -> Result<R, Error> {
        // SAFETY: `context` is a retained primary context, valid for the process.
        self.check("cuCtxPushCurrent", unsafe { (self.ctx_push_current)(context) })?;
        let result = f();
        let mut popped = core::ptr::null_mut();
        // SAFETY: pops the context pushed above.
        let pop = self.check("cuCtxPopCurrent", unsafe { (self.ctx_pop_current)(&mut popped) });
        let value = result?;
        pop.map(|()| value)
    }

    /// Loads a cubin, or PTX the driver compiles, into the current context.
    ///
    /// # Safety
    /// `image` must point to a complete cubin (ELF) image or to NUL-terminated PTX; a context
    /// must be current.
    pub(crate) unsafe fn load_module(&self, image: *const u8) -> Result<CuModule, Error> {
        let mut module = core::ptr::null_mut();
        // SAFETY: per the caller; the driver reads a cubin's size from its header, and PTX to
        // its NUL.
        self.check("cuModuleLoadData", unsafe {
            (self.module_load_data)(&mut module, image.cast())
        })?;
        Ok(module)
    }

    /// The kernel `name` of `module`.
    pub(crate) fn function(&self, module: CuModule, name: &CStr) -> Result<CuFunction, Error> {
        let mut function = core::ptr::null_mut();
        // SAFETY: `module` is a loaded module and `name` a C string.
        self.check("cuModuleGetFunction", unsafe {
            (self.module_get_function)(&mut function, module, name.as_ptr())
        })?;
        Ok(function)
    }

    /// A new non-blocking stream in the current context.
    pub(crate) fn create_stream(&self) -> Result<CuStream, Error> {
        let mut stream = core::ptr::null_mut();
        // SAFETY: the driver writes one handle; a context is current (callers' duty, checked
        // by the driver).
        self.check("cuStreamCreate", unsafe {
            (self.stream_create)(&mut stream, CU_STREAM_NON_BLOCKING)
        })?;
        Ok(stream)
    }

    /// Enqueues `function` on `stream` over a `grid` of `block`s, each with `shared` bytes of
    /// dynamic shared memory (over 48 KiB, the function is first allowed that much).
    ///
    /// # Safety
    /// `params` must hold one pointer per kernel parameter, each to a value of that parameter's
    /// type, and every device address among them must stay allocated until the kernel ends.
    pub(crate) unsafe fn launch(
        &self,
        function: CuFunction,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        stream: CuStream,
        params: &mut [*mut c_void],
    ) -> Result<(), Error> {
        if shared > DEFAULT_SHARED {
            self.allow_shared(function, shared)?;
        }
        // SAFETY: per the caller; the driver copies the parameter values before returning.
        self.check("cuLaunchKernel", unsafe {
            (self.launch_kernel)(
                function,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shared,
                stream,
                params.as_mut_ptr(),
                core::ptr::null_mut(),
            )
        })
    }

    /// Lets `function`'s launches ask for `shared` bytes of dynamic shared memory. The most any
    /// launch asked for stays allowed: a thread that lowered it between another's raise and
    /// that one's launch would fail the other's launch.
    fn allow_shared(&self, function: CuFunction, shared: u32) -> Result<(), Error> {
        static ALLOWED: std::sync::Mutex<Vec<(usize, u32)>> = std::sync::Mutex::new(Vec::new());
        let mut allowed = ALLOWED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = function as usize;
        let at = allowed.iter().position(|&(f, _)| f == key);
        if at.is_some_and(|i| allowed[i].1 >= shared) {
            return Ok(());
        }
        // SAFETY: `function` is a loaded kernel; the attribute takes a byte count (at most
        // 227 KiB, checked with the geometry).
        self.check("cuFuncSetAttribute", unsafe {
            (self.func_set_attribute)(
                function,
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as c_int,
            )
        })?;
        match at {
            Some(i) => allowed[i].1 = shared,
            None => allowed.push((key, shared)),
        }
        Ok(())
    }

    /// Waits until everything enqueued on `stream` (of `context`) so far has finished; the
    /// waiting thread sleeps where `blocking` (the context's wait mode is
    /// `CU_CTX_SCHED_BLOCKING_SYNC`: see [`waits_block`](Self::waits_block)), else spins. The
    /// wait is for an event recorded on the stream, not for the stream itself: the work before
    /// it is the same, and compute-sanitizer's racecheck loses track of kernels that other
    /// threads launch into a stream while one waits for it with `cuStreamSynchronize` ("failure
    /// to track a kernel launch"; measured with the driver API alone on an H200), but not of
    /// those around a waited event. Where no event can be recorded (no memory for one, the
    /// context not made current), the stream itself is waited for: a caller's borrowed memory
    /// may be in the copies, so the wait must not be skipped.
    pub(crate) fn synchronize(
        &self,
        context: CuContext,
        stream: CuStream,
        blocking: bool,
    ) -> Result<(), Error> {
        let flags = CU_EVENT_DISABLE_TIMING | if blocking { CU_EVENT_BLOCKING_SYNC } else { 0 };
        match self.with_context(context, || self.record_event_with(stream, flags)) {
            Ok(event) => {
                // SAFETY: a recorded event of this library's, destroyed after.
                let waited =
                    self.check("cuEventSynchronize", unsafe { (self.event_synchronize)(event) });
                self.destroy_event(event);
                waited
            }
            Err(_) => {
                // SAFETY: `stream` is a stream this library created and never destroys.
                let result = unsafe { (self.stream_synchronize)(stream) };
                self.check("cuStreamSynchronize", result)
            }
        }
    }

    /// Whether GPU `ordinal`'s primary context puts waiting threads to sleep
    /// (`CU_CTX_SCHED_BLOCKING_SYNC`, libomptarget's choice when it activates the context, or
    /// `OFFLOAD_CUDA_WAIT=blocking`): an event waited for must then say so too, or its wait
    /// spins.
    pub(crate) fn waits_block(&self, ordinal: c_int) -> bool {
        let (mut device, mut flags, mut active) = (0, 0, 0);
        // SAFETY: the driver writes one value each.
        unsafe {
            (self.device_get)(&mut device, ordinal) == 0
                && (self.primary_ctx_get_state)(device, &mut flags, &mut active) == 0
                && flags & CU_CTX_SCHED_MASK == CU_CTX_SCHED_BLOCKING_SYNC
        }
    }

    /// Enqueues a copy of `bytes` from host `src` to device address `dst` on `stream`, in the
    /// current context.
    ///
    /// # Safety
    /// `src` must stay readable for `bytes` until the stream has finished the copy, and `dst`
    /// must be device memory of the current context that nothing else uses meanwhile.
    pub(crate) unsafe fn copy_to_device(
        &self,
        dst: u64,
        src: *const u8,
        bytes: usize,
        stream: CuStream,
    ) -> Result<(), Error> {
        // SAFETY: per the caller.
        let result = unsafe { (self.memcpy_htod_async)(dst, src.cast(), bytes, stream) };
        self.check("cuMemcpyHtoDAsync", result)
    }

    /// Enqueues a copy of `bytes` from device address `src` to host `dst` on `stream`, in the
    /// current context.
    ///
    /// # Safety
    /// `dst` must stay writable for `bytes`, and untouched by the host, until the stream has
    /// finished the copy; `src` must be device memory of the current context.
    pub(crate) unsafe fn copy_to_host(
        &self,
        dst: *mut u8,
        src: u64,
        bytes: usize,
        stream: CuStream,
    ) -> Result<(), Error> {
        // SAFETY: per the caller.
        let result = unsafe { (self.memcpy_dtoh_async)(dst.cast(), src, bytes, stream) };
        self.check("cuMemcpyDtoHAsync", result)
    }

    /// A memory pool on GPU `ordinal` that, at a synchronisation, gives the memory nothing uses
    /// back to the system only while it holds more than `keep` bytes in all (its release
    /// threshold); `CUDA_ERROR_NOT_SUPPORTED` on a GPU without memory pools.
    pub(crate) fn create_pool(&self, ordinal: c_int, keep: u64) -> Result<CuMemPool, Error> {
        let props = MemPoolProps {
            alloc_type: 1,
            handle_types: 0,
            location: [1, ordinal],
            win32_security_attributes: core::ptr::null_mut(),
            reserved: [0; 64],
        };
        let mut pool = core::ptr::null_mut();
        let mut keep = keep;
        // SAFETY: the driver reads the properties and writes one handle; then reads a
        // `cuuint64_t`, the attribute's type.
        unsafe {
            self.check("cuMemPoolCreate", (self.mem_pool_create)(&mut pool, &props))?;
            // A pool whose threshold cannot be set still serves, giving the memory back at
            // every wait as `cuMemFree` does: used rather than dropped (and leaked).
            let _ = (self.mem_pool_set_attribute)(
                pool,
                CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&raw mut keep).cast(),
            );
        }
        Ok(pool)
    }

    /// `bytes` of device memory from `pool`, usable by the work enqueued on `stream` after this
    /// call (in the current context); none left is [`Error::OutOfMemory`].
    pub(crate) fn alloc_from(
        &self,
        pool: CuMemPool,
        bytes: usize,
        stream: CuStream,
    ) -> Result<u64, Error> {
        let mut address = 0;
        // SAFETY: the driver writes one address; `pool` and `stream` are the library's.
        let result = unsafe { (self.mem_alloc_from_pool_async)(&mut address, bytes, pool, stream) };
        self.allocated("cuMemAllocFromPoolAsync", result, bytes).map(|()| address)
    }

    /// Gives memory from [`alloc_from`](Self::alloc_from) back to its pool once the work
    /// enqueued on `stream` so far has finished, in its context (current).
    ///
    /// # Safety
    /// `address` must be from [`alloc_from`](Self::alloc_from), freed once, and no work
    /// enqueued on another stream may still use it.
    pub(crate) unsafe fn free_async(&self, address: u64, stream: CuStream) -> Result<(), Error> {
        // SAFETY: per the caller.
        self.check("cuMemFreeAsync", unsafe { (self.mem_free_async)(address, stream) })
    }

    /// `bytes` of device memory in the current context; none left is [`Error::OutOfMemory`].
    pub(crate) fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let mut address = 0;
        // SAFETY: the driver writes one address; a context is current (callers' duty).
        let result = unsafe { (self.mem_alloc)(&mut address, bytes) };
        self.allocated("cuMemAlloc", result, bytes).map(|()| address)
    }

    /// Frees memory from [`alloc`](Self::alloc), in its context (current).
    ///
    /// # Safety
    /// `address` must be from [`alloc`](Self::alloc), freed once, and no enqueued work may
    /// still use it.
    pub(crate) unsafe fn free(&self, address: u64) -> Result<(), Error> {
        // SAFETY: per the caller.
        self.check("cuMemFree", unsafe { (self.mem_free)(address) })
    }

    /// An allocation's result: `CUDA_ERROR_OUT_OF_MEMORY` as [`Error::OutOfMemory`].
    fn allocated(&self, call: &'static str, result: CuResult, bytes: usize) -> Result<(), Error> {
        if result == CUDA_ERROR_OUT_OF_MEMORY {
            let available = self.memory_info().map_or(0, |(free, _)| free);
            return Err(Error::OutOfMemory { bytes, available });
        }
        self.check(call, result)
    }

    /// Gives the memory `pool` keeps, and nothing uses, back to the system.
    pub(crate) fn trim_pool(&self, pool: CuMemPool) -> Result<(), Error> {
        // SAFETY: a pool of this library's.
        self.check("cuMemPoolTrimTo", unsafe { (self.mem_pool_trim_to)(pool, 0) })
    }

    /// A new event, recorded on `stream` (`CU_EVENT_DEFAULT`: with timing), in the current
    /// context.
    pub(crate) fn record_event(&self, stream: CuStream) -> Result<CuEvent, Error> {
        self.record_event_with(stream, 0)
    }

    /// [`record_event`](Self::record_event) of an event with `flags` (`CU_EVENT_*`).
    fn record_event_with(&self, stream: CuStream, flags: c_uint) -> Result<CuEvent, Error> {
        let mut event = core::ptr::null_mut();
        // SAFETY: the driver writes one handle; a context is current (callers' duty).
        self.check("cuEventCreate", unsafe { (self.event_create)(&mut event, flags) })?;
        // SAFETY: `event` was just created and `stream` is a stream this library created.
        let recorded = self.check("cuEventRecord", unsafe { (self.event_record)(event, stream) });
        if let Err(e) = recorded {
            self.destroy_event(event);
            return Err(e);
        }
        Ok(event)
    }

    /// Milliseconds between two recorded events of one context, once `end` has happened
    /// (waits for it).
    pub(crate) fn elapsed_ms(&self, start: CuEvent, end: CuEvent) -> Result<f32, Error> {
        let mut ms = 0.0f32;
        // SAFETY: both are recorded events this library created and has not destroyed.
        unsafe {
            self.check("cuEventSynchronize", (self.event_synchronize)(end))?;
            self.check("cuEventElapsedTime", (self.event_elapsed_time)(&mut ms, start, end))?;
        }
        Ok(ms)
    }

    /// Destroys an event (its resources are freed once it has happened); an error is ignored,
    /// as a Drop must.
    pub(crate) fn destroy_event(&self, event: CuEvent) {
        // SAFETY: an event this library created, destroyed once.
        let _ = unsafe { (self.event_destroy)(event) };
    }
}
