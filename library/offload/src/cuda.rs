//! The CUDA driver API through cudarc's bindings (`cudarc::driver::sys`, loaded at run time,
//! as libomptarget 19 loads the driver): the one place the library calls the driver (device
//! names and attributes, contexts, and the streams, events and memory pools of its launches).
//!
//! The methods of [`Api`] are one checked call each, returning the driver's failure as
//! [`Error::Cuda`]. A program without a driver (no GPU) gets `None` from [`api`] and never
//! calls any of it. cudarc's safe layer is not used: its context binds with `cuCtxSetCurrent`,
//! replacing the calling thread's context (which libomptarget's plugin sets as it likes),
//! where the library pushes the primary context and pops it after ([`Api::with_context`]), and
//! its streams and events are owned and destroyed at their drop, where the library's stream
//! lives as long as the process.
//!
//! The bindings are CUDA 13.0's (cudarc's `cuda-13000`, one version for the whole build). Their
//! `CUresult` is a Rust enum: a later driver returning a code 13.0 does not define would break
//! its validity, where the old table's `int` could not. The driver's failures for the calls
//! made here are the long-standing ones (memory, launch, context, not-supported); keep the
//! version in step with the drivers the library runs on.

use core::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

use cudarc::driver::sys::{
    self as cu, CUdevice_attribute, CUfunction_attribute, CUmemAllocationHandleType,
    CUmemAllocationType, CUmemLocationType, CUmemPool_attribute, CUresult,
};

use crate::Error;

/// `CUcontext`, `CUmodule`, `CUfunction`, `CUstream`, `CUevent`, `CUmemoryPool`: the driver's
/// opaque handles.
pub(crate) type CuContext = cu::CUcontext;
pub(crate) type CuModule = cu::CUmodule;
pub(crate) type CuFunction = cu::CUfunction;
pub(crate) type CuStream = cu::CUstream;
pub(crate) type CuEvent = cu::CUevent;
pub(crate) type CuMemPool = cu::CUmemoryPool;

/// `CU_CTX_SCHED_*`: how a thread waits for the GPU in a context (`BLOCKING_SYNC` is what
/// libomptarget sets when left alone), and the mask of a context's flags they take.
pub(crate) const CU_CTX_SCHED_AUTO: c_uint = cu::CUctx_flags::CU_CTX_SCHED_AUTO as c_uint;
pub(crate) const CU_CTX_SCHED_SPIN: c_uint = cu::CUctx_flags::CU_CTX_SCHED_SPIN as c_uint;
pub(crate) const CU_CTX_SCHED_YIELD: c_uint = cu::CUctx_flags::CU_CTX_SCHED_YIELD as c_uint;
const CU_CTX_SCHED_BLOCKING_SYNC: c_uint = cu::CUctx_flags::CU_CTX_SCHED_BLOCKING_SYNC as c_uint;
const CU_CTX_SCHED_MASK: c_uint = cu::CUctx_flags::CU_CTX_SCHED_MASK as c_uint;

/// Dynamic shared memory every kernel may have without asking (48 KiB).
const DEFAULT_SHARED: u32 = 48 << 10;

/// `CU_EVENT_DISABLE_TIMING`: an event only waited for; `CU_EVENT_BLOCKING_SYNC`: a wait for
/// the event sleeps instead of spinning.
const CU_EVENT_DISABLE_TIMING: c_uint = cu::CUevent_flags::CU_EVENT_DISABLE_TIMING as c_uint;
const CU_EVENT_BLOCKING_SYNC: c_uint = cu::CUevent_flags::CU_EVENT_BLOCKING_SYNC as c_uint;

/// `cuEventElapsedTime`'s signature: cudarc's bindings of CUDA 13 name only its `_v2` (CUDA
/// 12.8 and later drivers), which earlier drivers lack.
type EventElapsedTime = unsafe extern "C" fn(*mut f32, CuEvent, CuEvent) -> CUresult;

/// The driver, loaded and initialised (`cuInit(0)`): a token that the calls below may be made.
pub(crate) struct Api {
    event_elapsed_time: EventElapsedTime,
}

/// The driver, loaded and initialised on first use; `None` without one.
pub(crate) fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: see `load`.
        unsafe { load() }
    })
    .as_ref()
}

/// # Safety
/// The driver found must be CUDA's (`libcuda.so`), with the documented signatures.
unsafe fn load() -> Option<Api> {
    // The one name libomptarget 19's CUDA plugin loads: where it finds no driver, the library
    // must not see GPUs either, or it would number devices the runtime does not. cudarc tries
    // the same name first, then others (`libcuda.so.1`), so it loads this one.
    // SAFETY: loads a library by name.
    if unsafe { libc::dlopen(c"libcuda.so".as_ptr(), libc::RTLD_LAZY) }.is_null() {
        return None;
    }
    // SAFETY: the driver is loadable (above), so cudarc's loading does not fail; then one
    // lookup of a documented symbol, given its documented signature.
    unsafe {
        let event_elapsed_time =
            *cu::culib().get::<EventElapsedTime>(b"cuEventElapsedTime").ok()?;
        if cu::cuInit(0) != CUresult::CUDA_SUCCESS {
            return None;
        }
        Some(Api { event_elapsed_time })
    }
}

impl Api {
    /// `Ok` for `CUDA_SUCCESS`, else [`Error::Cuda`] naming the call and the driver's message.
    pub(crate) fn check(&self, call: &'static str, result: CUresult) -> Result<(), Error> {
        if result == CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        let mut text: *const c_char = core::ptr::null();
        // SAFETY: the driver writes a pointer to a static, NUL-terminated string, or leaves it
        // null; the strings live as long as the driver, which is never unloaded.
        let message = unsafe {
            if cu::cuGetErrorString(result, &mut text) == CUresult::CUDA_SUCCESS && !text.is_null()
            {
                CStr::from_ptr(text).to_str().unwrap_or("unknown CUDA error")
            } else {
                "unknown CUDA error"
            }
        };
        Err(Error::Cuda { call, code: result as i32, message })
    }

    /// GPUs the driver reports.
    pub(crate) fn device_count(&self) -> usize {
        let mut n = 0;
        // SAFETY: the driver writes one int.
        let ok = unsafe { cu::cuDeviceGetCount(&mut n) } == CUresult::CUDA_SUCCESS;
        if ok { usize::try_from(n).unwrap_or(0) } else { 0 }
    }

    /// GPU `ordinal`'s compute capability, `(major, minor)`.
    pub(crate) fn compute_capability(&self, ordinal: c_int) -> Option<(u32, u32)> {
        use CUdevice_attribute::{
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR,
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
        };
        Some((self.attribute(ordinal, MAJOR)?, self.attribute(ordinal, MINOR)?))
    }

    /// GPU `ordinal`'s multiprocessors.
    pub(crate) fn multiprocessor_count(&self, ordinal: c_int) -> Option<u32> {
        self.attribute(ordinal, CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
    }

    /// An attribute of GPU `ordinal`.
    fn attribute(&self, ordinal: c_int, attribute: CUdevice_attribute) -> Option<u32> {
        let device = self.device(ordinal).ok()?;
        let mut value = 0;
        // SAFETY: the driver writes one value.
        let result = unsafe { cu::cuDeviceGetAttribute(&mut value, attribute, device) };
        (result == CUresult::CUDA_SUCCESS).then_some(())?;
        u32::try_from(value).ok()
    }

    /// GPU `ordinal`'s name.
    pub(crate) fn device_name(&self, ordinal: c_int) -> Option<String> {
        let device = self.device(ordinal).ok()?;
        let mut buf = [0 as c_char; 256];
        // SAFETY: the driver writes at most `buf.len()` bytes, NUL-terminated.
        unsafe {
            let result = cu::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, device);
            (result == CUresult::CUDA_SUCCESS).then_some(())?;
            Some(CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned())
        }
    }

    /// The driver's handle of GPU `ordinal`.
    fn device(&self, ordinal: c_int) -> Result<cu::CUdevice, Error> {
        let mut device = 0;
        // SAFETY: the driver writes one handle.
        self.check("cuDeviceGet", unsafe { cu::cuDeviceGet(&mut device, ordinal) })?;
        Ok(device)
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
        let device = self.device(ordinal)?;
        let mut context = core::ptr::null_mut();
        // SAFETY: the driver writes one handle.
        self.check("cuDevicePrimaryCtxRetain", unsafe {
            cu::cuDevicePrimaryCtxRetain(&mut context, device)
        })?;
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
        let device = self.device(ordinal)?;
        let (mut flags, mut active) = (0, 0);
        // SAFETY: the driver writes one value each, then reads the flags.
        unsafe {
            self.check(
                "cuDevicePrimaryCtxGetState",
                cu::cuDevicePrimaryCtxGetState(device, &mut flags, &mut active),
            )?;
            if active != 0 {
                return Ok(false);
            }
            self.check(
                "cuDevicePrimaryCtxSetFlags",
                cu::cuDevicePrimaryCtxSetFlags_v2(device, sched),
            )?;
        }
        self.primary_context(ordinal)?;
        Ok(true)
    }

    /// Free and total bytes of memory of the GPU whose context is current.
    pub(crate) fn memory_info(&self) -> Result<(usize, usize), Error> {
        let (mut free, mut total) = (0, 0);
        // SAFETY: the driver writes two sizes; a context is current (callers' duty).
        self.check("cuMemGetInfo", unsafe { cu::cuMemGetInfo_v2(&mut free, &mut total) })?;
        Ok((free, total))
    }

    /// Runs `f` with `context` current on this thread, restoring the previous one after.
    pub(crate) fn with_context<R>(
        &self,
        context: CuContext,
        f: impl FnOnce() -> Result<R, Error>,
    ) -> Result<R, Error> {
        /// Pops the context pushed when `f` unwinds (a caller's closure may panic).
        struct PopOnUnwind;
        impl Drop for PopOnUnwind {
            fn drop(&mut self) {
                let mut popped = core::ptr::null_mut();
                // SAFETY: pops the context pushed below.
                let _ = unsafe { cu::cuCtxPopCurrent_v2(&mut popped) };
            }
        }
        // SAFETY: `context` is a retained primary context, valid for the process.
        self.check("cuCtxPushCurrent", unsafe { cu::cuCtxPushCurrent_v2(context) })?;
        let unwinding = PopOnUnwind;
        let result = f();
        core::mem::forget(unwinding);
        let mut popped = core::ptr::null_mut();
        // SAFETY: pops the context pushed above.
        let pop = self.check("cuCtxPopCurrent", unsafe { cu::cuCtxPopCurrent_v2(&mut popped) });
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
        self.check("cuModuleLoadData", unsafe { cu::cuModuleLoadData(&mut module, image.cast()) })?;
        Ok(module)
    }

    /// The kernel `name` of `module`.
    pub(crate) fn function(&self, module: CuModule, name: &CStr) -> Result<CuFunction, Error> {
        let mut function = core::ptr::null_mut();
        // SAFETY: `module` is a loaded module and `name` a C string.
        self.check("cuModuleGetFunction", unsafe {
            cu::cuModuleGetFunction(&mut function, module, name.as_ptr())
        })?;
        Ok(function)
    }

    /// A new non-blocking stream in the current context.
    pub(crate) fn create_stream(&self) -> Result<CuStream, Error> {
        let mut stream = core::ptr::null_mut();
        // SAFETY: the driver writes one handle; a context is current (callers' duty, checked
        // by the driver).
        self.check("cuStreamCreate", unsafe {
            cu::cuStreamCreate(&mut stream, cu::CUstream_flags::CU_STREAM_NON_BLOCKING as c_uint)
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
            cu::cuLaunchKernel(
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
            cu::cuFuncSetAttribute(
                function,
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
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
                    self.check("cuEventSynchronize", unsafe { cu::cuEventSynchronize(event) });
                self.destroy_event(event);
                waited
            }
            Err(_) => {
                // SAFETY: `stream` is a stream this library created and never destroys.
                let result = unsafe { cu::cuStreamSynchronize(stream) };
                self.check("cuStreamSynchronize", result)
            }
        }
    }

    /// Whether GPU `ordinal`'s primary context puts waiting threads to sleep
    /// (`CU_CTX_SCHED_BLOCKING_SYNC`, libomptarget's choice when it activates the context, or
    /// `OFFLOAD_CUDA_WAIT=blocking`): an event waited for must then say so too, or its wait
    /// spins.
    pub(crate) fn waits_block(&self, ordinal: c_int) -> bool {
        let Ok(device) = self.device(ordinal) else { return false };
        let (mut flags, mut active) = (0, 0);
        // SAFETY: the driver writes one value each.
        let state = unsafe { cu::cuDevicePrimaryCtxGetState(device, &mut flags, &mut active) };
        state == CUresult::CUDA_SUCCESS && flags & CU_CTX_SCHED_MASK == CU_CTX_SCHED_BLOCKING_SYNC
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
        let result = unsafe { cu::cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes, stream) };
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
        let result = unsafe { cu::cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, stream) };
        self.check("cuMemcpyDtoHAsync", result)
    }

    /// Enqueues setting `bytes` bytes at device address `dst` to `byte` on `stream`, in the
    /// current context.
    ///
    /// # Safety
    /// `dst` must be device memory of the current context that nothing else uses meanwhile.
    pub(crate) unsafe fn fill_device(
        &self,
        dst: u64,
        byte: u8,
        bytes: usize,
        stream: CuStream,
    ) -> Result<(), Error> {
        // SAFETY: per the caller.
        let result = unsafe { cu::cuMemsetD8Async(dst, byte, bytes, stream) };
        self.check("cuMemsetD8Async", result)
    }

    /// A memory pool on GPU `ordinal` that, at a synchronisation, gives the memory nothing uses
    /// back to the system only while it holds more than `keep` bytes in all (its release
    /// threshold); `CUDA_ERROR_NOT_SUPPORTED` on a GPU without memory pools.
    pub(crate) fn create_pool(&self, ordinal: c_int, keep: u64) -> Result<CuMemPool, Error> {
        // SAFETY: the driver's plain C struct, all zeros its defaults.
        let mut props: cu::CUmemPoolProps = unsafe { core::mem::zeroed() };
        props.allocType = CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location.type_ = CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = ordinal;
        let mut pool = core::ptr::null_mut();
        let mut keep = keep;
        // SAFETY: the driver reads the properties and writes one handle; then reads a
        // `cuuint64_t`, the attribute's type.
        unsafe {
            self.check("cuMemPoolCreate", cu::cuMemPoolCreate(&mut pool, &props))?;
            // A pool whose threshold cannot be set still serves, giving the memory back at
            // every wait as `cuMemFree` does: used rather than dropped (and leaked).
            let _ = cu::cuMemPoolSetAttribute(
                pool,
                CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&raw mut keep).cast::<c_void>(),
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
        let result = unsafe { cu::cuMemAllocFromPoolAsync(&mut address, bytes, pool, stream) };
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
        self.check("cuMemFreeAsync", unsafe { cu::cuMemFreeAsync(address, stream) })
    }

    /// `bytes` of device memory in the current context; none left is [`Error::OutOfMemory`].
    pub(crate) fn alloc(&self, bytes: usize) -> Result<u64, Error> {
        let mut address = 0;
        // SAFETY: the driver writes one address; a context is current (callers' duty).
        let result = unsafe { cu::cuMemAlloc_v2(&mut address, bytes) };
        self.allocated("cuMemAlloc", result, bytes).map(|()| address)
    }

    /// Frees memory from [`alloc`](Self::alloc), in its context (current).
    ///
    /// # Safety
    /// `address` must be from [`alloc`](Self::alloc), freed once, and no enqueued work may
    /// still use it.
    pub(crate) unsafe fn free(&self, address: u64) -> Result<(), Error> {
        // SAFETY: per the caller.
        self.check("cuMemFree", unsafe { cu::cuMemFree_v2(address) })
    }

    /// An allocation's result: `CUDA_ERROR_OUT_OF_MEMORY` as [`Error::OutOfMemory`].
    fn allocated(&self, call: &'static str, result: CUresult, bytes: usize) -> Result<(), Error> {
        if result == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let available = self.memory_info().map_or(0, |(free, _)| free);
            return Err(Error::OutOfMemory { bytes, available });
        }
        self.check(call, result)
    }

    /// Gives the memory `pool` keeps, and nothing uses, back to the system.
    pub(crate) fn trim_pool(&self, pool: CuMemPool) -> Result<(), Error> {
        // SAFETY: a pool of this library's.
        self.check("cuMemPoolTrimTo", unsafe { cu::cuMemPoolTrimTo(pool, 0) })
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
        self.check("cuEventCreate", unsafe { cu::cuEventCreate(&mut event, flags) })?;
        // SAFETY: `event` was just created and `stream` is a stream this library created.
        let recorded = self.check("cuEventRecord", unsafe { cu::cuEventRecord(event, stream) });
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
            self.check("cuEventSynchronize", cu::cuEventSynchronize(end))?;
            self.check("cuEventElapsedTime", (self.event_elapsed_time)(&mut ms, start, end))?;
        }
        Ok(ms)
    }

    /// Destroys an event (its resources are freed once it has happened); an error is ignored,
    /// as a Drop must.
    pub(crate) fn destroy_event(&self, event: CuEvent) {
        // SAFETY: an event this library created, destroyed once.
        let _ = unsafe { cu::cuEventDestroy_v2(event) };
    }
}
