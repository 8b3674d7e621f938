//! The library's launches on a GPU's stream: asynchronous ones of present data
//! (`launch_async!`), and synchronous ones (`launch!`), which give plain arguments device memory
//! of their own around the kernel.

use core::ffi::c_int;
use std::sync::OnceLock;

use super::copies::{self, Direction};
use super::gpus::{Gpu, cuda_ordinal, gpu};
use super::module::CudaImage;
use super::pending::{count_enqueued, synchronize_ordinal};
use crate::Error;
use crate::cuda::CuFunction;
use crate::geometry::Geometry;
use crate::intrinsics::arg_kind;

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
    /// For data the launch maps around itself (`MAP_TO`, `MAP_TO_FROM`): the bytes it maps at
    /// `value` (on a GPU, the memory of its own it allocates; through the runtime, the marker's
    /// size operand). `size`, or 0 where the library has mapped the data already, for the
    /// launch, as part of one range that overlapping `&T` arguments share
    /// (`crate::launch::check_mapped`): its address is then found inside that range.
    pub map: i64,
    /// For `PRESENT` data, its device address where the argument knew it
    /// (`KernelArg::mapped`), else 0: the launch asks the runtime.
    pub mapped: u64,
}

impl Slot {
    /// A slot whose data, if the launch maps it, is mapped as it is; `mapped` as
    /// [`Slot::mapped`].
    #[inline(always)]
    pub const fn new(kind: i64, value: *const u8, size: i64, mapped: u64) -> Slot {
        Slot { kind, value, size, map: size, mapped }
    }

    /// The launch marker's size operand of this slot, of kind `kind` and size `size` (the
    /// launcher's constants where they are): the bytes its mappers map ([`Slot::map`]) for data
    /// the launch maps around itself, else `size`.
    #[inline(always)]
    pub fn marker_size(&self, kind: i64, size: i64) -> i64 {
        if arg_kind::mapped_by_launch(kind) { self.map } else { size }
    }

    /// Whether this is non-empty data the launch maps around itself (plain `&T`/`&mut T`;
    /// empty data is not mapped: it reaches the kernel as a null, dangling-free reference).
    #[inline(always)]
    pub(crate) fn mapped_by_launch(&self) -> bool {
        arg_kind::mapped_by_launch(self.kind) && self.size > 0
    }
}

/// Enqueues `kernel` on the library's stream of `device`'s GPU and returns at once with
/// `Ok(true)`; `Ok(false)` when the device is not a CUDA GPU (the caller launches
/// synchronously instead).
///
/// # Safety
/// Every `PRESENT` slot must be data a live guard keeps mapped on `device` (its `KernelArg`
/// impl's contract); the slots must match the kernel's parameters in number and order.
pub(crate) unsafe fn launch_async(
    image: CudaImage,
    device: i64,
    kernel: &'static str,
    geometry: Geometry,
    slots: &[Slot],
) -> Result<bool, Error> {
    let Some((id, ordinal)) = cuda_ordinal(image, device, kernel, &geometry)? else {
        return Ok(false);
    };
    // `PresentArg` admits nothing else: data a plain `&T` lends for the call alone must not reach
    // a kernel that outlives it.
    assert!(
        slots.iter().all(|s| matches!(s.kind, arg_kind::LITERAL | arg_kind::PRESENT)),
        "an asynchronous launch of `{kernel}` with data it would map itself"
    );
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
/// of its own from the GPU's memory pool (`cuMemAlloc` on a GPU without pools), copied in on
/// the stream; then the kernel, the copies back of `&mut T`, one wait, and the frees
/// (`enqueue_around`). The runtime's mapping table is not asked: its begin and end mappers
/// cost about 18 us a call on an H200 (four a launch of two arguments), the pool's allocation
/// and free 2-4 us. Those the library has mapped already (overlapping `&T` arguments,
/// [`Slot::map`] 0) were copied in then. Present data and values pass as they are. After a
/// fault the memory is left as it is: the GPU's context is lost. `Ok(false)` when the device
/// is not a CUDA GPU, or `OFFLOAD_LAUNCH=runtime` asks for libomptarget's
/// `__tgt_target_kernel` always: the caller launches through the runtime then.
///
/// # Safety
/// As [`launch_async`], except that slots may also be `MAP_TO`/`MAP_TO_FROM` data borrowed
/// for the whole call.
pub(crate) unsafe fn launch_sync(
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
        if image.arch_specific() {
            return Err(Error::InvalidGeometry {
                kernel,
                reason: "OFFLOAD_LAUNCH=runtime launches through libomptarget 19, which has no \
                         kernels of an sm_90a image (its cubin is a stub): leave OFFLOAD_LAUNCH \
                         unset",
            });
        }
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
        // Every one is freed, whatever another's free said; the first failure is returned.
        let mut freed = Ok(());
        for &device in own.iter().flatten() {
            // SAFETY: allocated by `enqueue_around`, freed once; the stream has finished with
            // it, and nothing else used it.
            freed = freed.and(unsafe { gpu.free(device) });
        }
        freed
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
        let device = gpu.alloc(bytes)?;
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
/// address of present data: its guard's ([`Slot::mapped`]), or the runtime's mapping's.
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
                // Found when its guard mapped it, on the launch's device (`check_devices`).
                _ if slot.kind == arg_kind::PRESENT && slot.mapped != 0 => slot.mapped,
                _ => {
                    let mapped = crate::rt::mapped_ptr(slot.value, id as c_int)
                        .ok_or(Error::NotPresent { kernel })?;
                    mapped.as_ptr() as usize as u64
                }
            },
            _ => unreachable!("the launch macros make literal, present and mapped slots only"),
        });
    }
    Ok(values)
}

/// `OFFLOAD_LAUNCH=runtime`: every synchronous launch goes through libomptarget's
/// `__tgt_target_kernel`, as the lowering emits it (read once).
fn runtime_launches_only() -> bool {
    static ONLY: OnceLock<bool> = OnceLock::new();
    *ONLY.get_or_init(|| {
        std::env::var("OFFLOAD_LAUNCH").is_ok_and(|v| v.eq_ignore_ascii_case("runtime"))
    })
}
