//! Asynchronous launches (`launch_async!`): kernels enqueued on a CUDA stream the library owns,
//! one per GPU, in the GPU's primary context (the one libomptarget's CUDA plugin uses, so the
//! device addresses of its mappings are valid there).
//!
//! Soundness rests on three facts (docs/GUIDE.md's "Asynchronous launches" has the whole argument):
//! 1. only present data (`Preload`/`PreloadMut` and their ranges) and scalars reach an
//!    asynchronous kernel (`PresentArg`), so a kernel touches device memory only, and only
//!    memory that a guard keeps mapped;
//! 2. every library entry point that makes libomptarget touch a device first waits for that
//!    device's stream when a kernel may still run there ([`synchronize_pending`]): the end mapper
//!    of a guard's Drop, `sync`, `update`, a preload and a synchronous launch never overlap our
//!    kernels, so a `PreloadMut` copies back the data the last kernel wrote;
//! 3. device memory is freed only by those end mappers; a leaked (`mem::forget`) guard leaves
//!    its mapping, and so the memory its kernels write, allocated for good.
//!
//! Pending work is tracked per GPU by two counters instead of one flag, so that threads
//! launching and waiting at once never lose a pending kernel: `LAUNCHED` counts kernels enqueued
//! (incremented after `cuLaunchKernel` returns), `SYNCED` the highest count a stream
//! synchronisation has covered. `SYNCED >= LAUNCHED` means nothing enqueued is still running.

use core::ffi::{c_int, c_void};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Mutex, OnceLock};

use crate::copies::{self, Direction};
use crate::cuda::{self, Api, CuContext, CuFunction, CuModule, CuStream};
use crate::geometry::Geometry;
use crate::intrinsics::arg_kind;
use crate::{Error, rt, sys};

/// GPUs the library's streams serve (CUDA ordinals below it). Launches on others go through
/// libomptarget's own launch, synchronously, and along x only ([`cuda_ordinal`]).
const MAX_GPUS: usize = 64;
// `beyond_table`'s message names the number.
const _: () = assert!(MAX_GPUS == 64);

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
/// stderr. The cubin's error is the one returned.
///
/// # Safety
/// `image` must be the lowering's complete cubin and NUL-terminated PTX (or null PTX); a
/// context must be current.
unsafe fn load_module(api: &Api, image: CudaImage) -> Result<(CuModule, ModuleSource), Error> {
    // SAFETY: per the caller, `load` is handed the cubin or the PTX.
    load_preferring(&image, preferred_source(), |bytes| unsafe { api.load_module(bytes) })
}

/// [`load_module`]'s choice, over `load` (the driver's `cuModuleLoadData`).
fn load_preferring(
    image: &CudaImage,
    preferred: ModuleSource,
    load: impl Fn(*const u8) -> Result<CuModule, Error>,
) -> Result<(CuModule, ModuleSource), Error> {
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

/// One parameter slot of a launch: what the launch marker's triple holds.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Slot {
    /// An `intrinsics::arg_kind` constant.
    pub kind: i64,
    /// A scalar's bits, or the host address of the data.
    pub value: *const u8,
    /// Bytes the address covers (0: an empty range, passed as null).
    pub size: i64,
    /// For data the launch maps around itself (`MAP_TO`, `MAP_TO_FROM`): the bytes its mappers
    /// map at `value`, the marker's size operand. `size`, or 0 where the library has mapped the
    /// data already, for the launch, as part of one range that overlapping `&T` arguments
    /// share (`launch::check_mapped`): the runtime then finds the address inside that range.
    pub map: i64,
}

impl Slot {
    /// A slot whose data, if the launch maps it, is mapped as it is.
    #[inline(always)]
    pub const fn new(kind: i64, value: *const u8, size: i64) -> Slot {
        Slot { kind, value, size, map: size }
    }

    /// Whether this is non-empty data the launch maps around itself (plain `&T`/`&mut T`;
    /// empty data is not mapped: it reaches the kernel as a null, dangling-free reference).
    #[inline(always)]
    pub(crate) fn mapped_by_launch(&self) -> bool {
        arg_kind::mapped_by_launch(self.kind) && self.size > 0
    }
}

/// A GPU's stream, its module (the program's kernels, loaded once more by the library on the
/// first launch: see [`load_module`]) and its kernels by name.
struct Gpu {
    api: &'static Api,
    context: CuContext,
    stream: CuStream,
    module: OnceLock<Result<(CuModule, ModuleSource), Error>>,
    functions: Mutex<HashMap<&'static str, CuFunction>>,
}

// SAFETY: driver handles may be used from any thread; the map is behind a mutex.
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

static GPUS: [OnceLock<Result<Gpu, Error>>; MAX_GPUS] = [const { OnceLock::new() }; MAX_GPUS];
static LAUNCHED: [AtomicU64; MAX_GPUS] = [const { AtomicU64::new(0) }; MAX_GPUS];
static SYNCED: [AtomicU64; MAX_GPUS] = [const { AtomicU64::new(0) }; MAX_GPUS];
/// Set by the first asynchronous launch: until then no entry point pays more than this load.
static ANY_LAUNCHED: AtomicBool = AtomicBool::new(false);

impl Gpu {
    fn open(ordinal: usize) -> Result<Gpu, Error> {
        let api = cuda::api().ok_or(Error::NoDevice)?;
        let context = api.primary_context(ordinal as c_int)?;
        let stream = api.with_context(context, || api.create_stream())?;
        register_exit_synchronization();
        Ok(Gpu {
            api,
            context,
            stream,
            module: OnceLock::new(),
            functions: Mutex::new(HashMap::new()),
        })
    }

    /// Enqueues `function` with parameter `values` (8 bytes each, as the entry declares them)
    /// on the stream, in the GPU's context (current).
    ///
    /// # Safety
    /// One value per entry parameter; every device address among them must stay allocated
    /// until the kernel ends.
    unsafe fn enqueue_kernel(
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

    fn function(&self, image: CudaImage, kernel: &'static str) -> Result<CuFunction, Error> {
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

/// One more than the highest ordinal of a GPU opened: the waits look at these GPUs only.
static OPENED: AtomicUsize = AtomicUsize::new(0);

/// The GPU of CUDA ordinal `ordinal`, opened on first use.
fn gpu(ordinal: usize) -> Result<&'static Gpu, Error> {
    let gpu = GPUS[ordinal].get_or_init(|| Gpu::open(ordinal)).as_ref();
    // Before any launch on it is counted: a wait that sees the count sees the GPU.
    OPENED.fetch_max(ordinal + 1, Ordering::AcqRel);
    gpu.map_err(Clone::clone)
}

/// Where a launch on runtime device `device` (-1: the default) can be enqueued: the runtime's
/// number for the device and its CUDA ordinal (`rt::gpu_ordinal`: the GPUs that can run the
/// cubin, numbered first). `None` (run through the runtime) for the host-offload plugin's
/// devices, without a cubin, and for GPUs beyond the library's table ([`MAX_GPUS`]), where a
/// launch the runtime cannot make as asked (along y or z, or with shared memory: libomptarget
/// 19 launches along x only) is refused rather than made wrong.
fn cuda_ordinal(
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
    beyond_table(ordinal, kernel, geometry).map(|()| (ordinal < MAX_GPUS).then_some((id, ordinal)))
}

/// Refuses a launch on a GPU beyond the library's table that only the library can make.
fn beyond_table(ordinal: usize, kernel: &'static str, geometry: &Geometry) -> Result<(), Error> {
    if ordinal >= MAX_GPUS && !geometry.is_linear() {
        return Err(Error::InvalidGeometry {
            kernel,
            reason: "GPUs of CUDA ordinal 64 and above launch through libomptarget 19's \
                     __tgt_target_kernel, which launches along x only and without shared \
                     memory: launch so on this GPU, or use one of a lower CUDA ordinal",
        });
    }
    Ok(())
}

/// Enqueues `kernel` on the library's stream of `device`'s GPU and returns at once with
/// `Ok(true)`; `Ok(false)` when the device is not a CUDA GPU (the caller launches
/// synchronously instead).
///
/// # Safety
/// Every `PRESENT` slot must be data a live guard keeps mapped on `device` (its `KernelArg`
/// impl's contract); the slots must match the kernel's parameters in number and order.
pub unsafe fn launch_async(
    image: CudaImage,
    device: i64,
    kernel: &'static str,
    geometry: Geometry,
    slots: &[Slot],
) -> Result<bool, Error> {
    let Some((id, ordinal)) = cuda_ordinal(image, device, kernel, &geometry)? else {
        return Ok(false);
    };
    let gpu = gpu(ordinal)?;
    let function = gpu.function(image, kernel)?;
    // SAFETY: per the caller, present data only (no slot has memory of the launch's own).
    let values = unsafe { parameters(id, kernel, slots, &[]) }?;
    gpu.api.with_context(gpu.context, || {
        // SAFETY: the values match the entry (the caller's contract); the device addresses
        // belong to mappings that stay allocated until a synchronisation (see the module's
        // documentation).
        let launched = unsafe { gpu.enqueue_kernel(function, &geometry, values) };
        // Counted once the driver has the kernel, even if restoring the context fails after:
        // an uncounted queued kernel would let a later Drop skip its wait.
        if launched.is_ok() {
            count_enqueued(ordinal);
        }
        launched
    })?;
    Ok(true)
}

/// A synchronous launch through the library's stream on `device`'s GPU, so that a kernel that
/// faults is [`Error::Cuda`] here (and at every later wait: the driver keeps the error) instead
/// of libomptarget 19 ending the process. Each plain `&T`/`&mut T` argument gets device memory
/// of its own from the driver (`cuMemAlloc`), copied in on the stream; then the kernel, the
/// copies back of `&mut T`, one wait, and the frees ([`enqueue_around`]). The runtime's
/// mapping table is not asked: its begin and end mappers cost about 18 us a call on an H200
/// (four a launch of two arguments), the driver's allocation and free 2-4 us. Those the library
/// has mapped already (overlapping `&T` arguments, [`Slot::map`] 0) were copied in then.
/// Present data and values pass as they are. After a fault the memory is left as it is: the
/// GPU's context is lost. `Ok(false)` when the device is not a CUDA GPU, or
/// `OFFLOAD_LAUNCH=runtime` asks for libomptarget's `__tgt_target_kernel` always: the caller
/// launches through the runtime then.
///
/// # Safety
/// As [`launch_async`], except that slots may also be `MAP_TO`/`MAP_TO_FROM` data borrowed
/// for the whole call.
pub unsafe fn launch_sync(
    image: CudaImage,
    device: i64,
    kernel: &'static str,
    geometry: Geometry,
    slots: &[Slot],
) -> Result<bool, Error> {
    let Some((id, ordinal)) = cuda_ordinal(image, device, kernel, &geometry)? else {
        return Ok(false);
    };
    if runtime_launches_only() {
        if !geometry.is_linear() {
            return Err(Error::InvalidGeometry {
                kernel,
                reason: "OFFLOAD_LAUNCH=runtime launches through libomptarget 19's \
                         __tgt_target_kernel, which launches along x only and without shared \
                         memory: launch so, or leave OFFLOAD_LAUNCH unset",
            });
        }
        return Ok(false);
    }
    let gpu = gpu(ordinal)?;
    let function = gpu.function(image, kernel)?;
    let mut own: Vec<Option<u64>> = vec![None; slots.len()];
    let enqueued = gpu.api.with_context(gpu.context, || {
        // SAFETY: per the caller.
        let enqueued =
            unsafe { enqueue_around(gpu, function, id, kernel, &geometry, slots, &mut own) };
        // Whatever part of it the driver took is covered by the wait below.
        count_enqueued(ordinal);
        enqueued
    });
    // Whatever the enqueues said, wait for the stream before the memory goes and before
    // returning: the borrowed host data must not be touched by a copy after the call. A failed
    // wait means the GPU's context is lost (this kernel or an earlier one faulted).
    synchronize_ordinal(ordinal)?;
    let freed = gpu.api.with_context(gpu.context, || {
        own.iter().flatten().try_for_each(|&device| {
            // SAFETY: allocated by `enqueue_around`, freed once; the stream has finished with it.
            unsafe { gpu.api.free(device) }
        })
    });
    enqueued.and(freed).map(|()| true)
}

/// [`launch_sync`]'s work, in the GPU's context: for each slot with data of its own (plain,
/// non-empty, not in a range mapped already), device memory (`own[i]`, which the caller frees
/// after its wait) and the copy in; the kernel; the copies back of `&mut T`.
///
/// # Safety
/// As [`launch_sync`]; the caller waits for the stream before the borrows end.
unsafe fn enqueue_around(
    gpu: &Gpu,
    function: CuFunction,
    id: usize,
    kernel: &'static str,
    geometry: &Geometry,
    slots: &[Slot],
    own: &mut [Option<u64>],
) -> Result<(), Error> {
    let api = gpu.api;
    for (slot, mine) in slots.iter().zip(own.iter_mut()) {
        if !slot.mapped_by_launch() || slot.map == 0 {
            continue;
        }
        let bytes = slot.map as usize;
        let device = api.alloc(bytes)?;
        *mine = Some(device);
        // SAFETY: the caller's borrow lasts until the stream has finished (the caller waits);
        // `device` was allocated for it.
        unsafe {
            copies::enqueue(api, gpu.stream, Direction::ToDevice, slot.value, device, bytes)
        }?;
    }
    // SAFETY: present slots are mapped (the caller's contract); the others have memory.
    let values = unsafe { parameters(id, kernel, slots, own) }?;
    // SAFETY: as above; the memory stays allocated until after the caller's wait.
    unsafe { gpu.enqueue_kernel(function, geometry, values) }?;
    for (slot, mine) in slots.iter().zip(own.iter()) {
        if let (Some(device), arg_kind::MAP_TO_FROM) = (*mine, slot.kind) {
            // SAFETY: a `&mut T` argument, borrowed mutably for the whole call.
            unsafe {
                copies::enqueue(
                    api,
                    gpu.stream,
                    Direction::ToHost,
                    slot.value,
                    device,
                    slot.map as usize,
                )
            }?;
        }
    }
    Ok(())
}

/// A kernel's parameter values: `dyn_ptr` (null), the geometry slot (which the nvptx entry
/// ignores: the hardware has the geometry), then one per slot: a scalar's bits, null for empty
/// data, the launch's own memory for the slot (`own[i]`) where it has some, else the device
/// address of the runtime's mapping of present data.
///
/// # Safety
/// Each slot without memory of its own must be data mapped on runtime device `id`.
unsafe fn parameters(
    id: usize,
    kernel: &'static str,
    slots: &[Slot],
    own: &[Option<u64>],
) -> Result<Vec<u64>, Error> {
    let mut values: Vec<u64> = Vec::with_capacity(slots.len() + 2);
    values.extend([0, 0]);
    for (i, slot) in slots.iter().enumerate() {
        values.push(match slot.kind {
            arg_kind::LITERAL => slot.value as usize as u64,
            arg_kind::PRESENT | arg_kind::MAP_TO | arg_kind::MAP_TO_FROM if slot.size == 0 => 0,
            arg_kind::PRESENT | arg_kind::MAP_TO | arg_kind::MAP_TO_FROM => match own.get(i) {
                Some(&Some(device)) => device,
                _ => {
                    // SAFETY: a lookup in the runtime's mapping table; it changes nothing.
                    let mapped = unsafe { sys::omp_get_mapped_ptr(slot.value.cast(), id as c_int) };
                    if mapped.is_null() {
                        return Err(Error::NotPresent { kernel });
                    }
                    mapped as usize as u64
                }
            },
            _ => unreachable!("the launch macros make literal, present and mapped slots only"),
        });
    }
    Ok(values)
}

/// Counts work just enqueued on GPU `ordinal`'s stream: a wait that sees the count covers it.
fn count_enqueued(ordinal: usize) {
    LAUNCHED[ordinal].fetch_add(1, Ordering::Release);
    ANY_LAUNCHED.store(true, Ordering::Release);
}

/// `OFFLOAD_LAUNCH=runtime`: every synchronous launch goes through libomptarget's
/// `__tgt_target_kernel`, as the lowering emits it (read once).
fn runtime_launches_only() -> bool {
    static ONLY: OnceLock<bool> = OnceLock::new();
    *ONLY.get_or_init(|| {
        std::env::var("OFFLOAD_LAUNCH").is_ok_and(|v| v.eq_ignore_ascii_case("runtime"))
    })
}

/// Waits for the kernels enqueued on GPU `ordinal`'s stream, if any may still run.
fn synchronize_ordinal(ordinal: usize) -> Result<(), Error> {
    let launched = LAUNCHED[ordinal].load(Ordering::Acquire);
    if SYNCED[ordinal].load(Ordering::Acquire) >= launched {
        return Ok(());
    }
    let Some(Ok(gpu)) = GPUS[ordinal].get() else { return Ok(()) };
    // Covers every kernel counted in `launched`: each was enqueued before its count.
    gpu.api.synchronize(gpu.stream)?;
    SYNCED[ordinal].fetch_max(launched, Ordering::AcqRel);
    Ok(())
}

/// The library's stream on runtime device `device` (-1: the default), with its driver and
/// context, where the device is a GPU within the library's table; `None` for the host-offload
/// plugin's devices (and GPUs beyond the table), whose launches are synchronous.
pub(crate) fn device_stream(
    device: i64,
) -> Result<Option<(&'static Api, CuContext, CuStream)>, Error> {
    let id = rt::resolve_device(device)?;
    let Some(ordinal) = usize::try_from(id).ok().and_then(rt::gpu_ordinal) else {
        return Ok(None);
    };
    if ordinal >= MAX_GPUS {
        return Ok(None);
    }
    let gpu = gpu(ordinal)?;
    Ok(Some((gpu.api, gpu.context, gpu.stream)))
}

/// Waits for the library's stream of runtime device `device` (-1: the default) when an
/// asynchronous kernel may still run there. Every entry point that makes libomptarget touch a
/// device calls this first; a program that never launches asynchronously pays one atomic load
/// and a branch (the rest is out of line).
#[inline(always)]
pub fn synchronize_pending(device: i64) -> Result<(), Error> {
    if launched_async() { synchronize_device(device) } else { Ok(()) }
}

/// [`synchronize_pending`] for entry points that cannot return an error (a guard's Drop,
/// `PreloadMut::sync`/`update`): a failed synchronisation means a kernel faulted and the
/// device's data is lost, so the process ends with the driver's message, as libomptarget 19
/// itself ends it when a synchronous kernel faults. Going on would copy back garbage.
#[inline(always)]
pub(crate) fn synchronize_pending_or_exit(device: i64) {
    if launched_async() {
        synchronize_device_or_exit(device)
    }
}

#[cold]
#[inline(never)]
fn synchronize_device(device: i64) -> Result<(), Error> {
    // Nothing queued anywhere (the steady state between batches of asynchronous launches):
    // done without asking the runtime which device is the default.
    let pending =
        |o: usize| SYNCED[o].load(Ordering::Acquire) < LAUNCHED[o].load(Ordering::Acquire);
    if !(0..OPENED.load(Ordering::Acquire)).any(pending) {
        return Ok(());
    }
    let Ok(device) = rt::resolve_device(device) else { return Ok(()) };
    match usize::try_from(device).ok().and_then(rt::gpu_ordinal) {
        Some(ordinal) if ordinal < MAX_GPUS => synchronize_ordinal(ordinal),
        _ => Ok(()),
    }
}

#[cold]
#[inline(never)]
fn synchronize_device_or_exit(device: i64) {
    if let Err(e) = synchronize_device(device) {
        eprintln!("offload: error: {e}");
        std::process::abort()
    }
}

/// Whether any kernel was ever launched asynchronously (until then nothing can be pending).
#[inline(always)]
pub(crate) fn launched_async() -> bool {
    ANY_LAUNCHED.load(Ordering::Acquire)
}

/// How many asynchronous launches no synchronisation has covered yet, on every GPU (0 on the
/// host-offload plugin, where a launch runs at once). For tests of what waits and what does not.
pub fn pending_launches() -> u64 {
    (0..OPENED.load(Ordering::Acquire))
        .map(|o| {
            LAUNCHED[o].load(Ordering::Acquire).saturating_sub(SYNCED[o].load(Ordering::Acquire))
        })
        .sum()
}

/// Waits until every kernel launched asynchronously, on every GPU, has finished.
pub fn synchronize() -> Result<(), Error> {
    let mut first_error = Ok(());
    for ordinal in 0..OPENED.load(Ordering::Acquire) {
        if let Err(e) = synchronize_ordinal(ordinal) {
            first_error = first_error.and(Err(e));
        }
    }
    first_error
}

/// Runs at exit, before the runtime's unregistration (registered after it, so called before
/// it): no kernel may still write memory that the runtime frees at exit.
fn register_exit_synchronization() {
    extern "C" fn at_exit() {
        if let Err(e) = synchronize() {
            // A kernel faulted and nothing waited for it before: the program's results are
            // incomplete, so it must not exit with success.
            eprintln!("offload: error: at exit: {e}");
            std::process::abort();
        }
    }
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: registers a function with the C library; it runs once at exit.
        unsafe { sys::atexit(at_exit) };
    });
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
        let module = |bytes: *const u8| bytes.cast_mut().cast::<core::ffi::c_void>();
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
    fn a_gpu_beyond_the_table_refuses_what_only_the_library_can_launch() {
        let linear = Geometry { grid: [64, 1, 1], block: [256, 1, 1], shared: 0 };
        let planar = Geometry { grid: [8, 8, 1], ..linear };
        let shared = Geometry { shared: 1024, ..linear };
        for ordinal in [0, MAX_GPUS - 1, MAX_GPUS, MAX_GPUS + 7] {
            assert!(beyond_table(ordinal, "k", &linear).is_ok());
        }
        for geometry in [planar, shared] {
            assert!(beyond_table(MAX_GPUS - 1, "k", &geometry).is_ok());
            let e = beyond_table(MAX_GPUS, "k", &geometry).unwrap_err().to_string();
            assert!(
                e.starts_with("invalid launch geometry for kernel `k`: GPUs of CUDA ordinal 64"),
                "{e}"
            );
        }
    }
}
