//! A launch: the kernel's trait of launches, its geometry, and the checks made before
//! anything is copied (geometry, launch bounds, devices, partitions, mappings).

use crate::Error;
use crate::geometry::Geometry;
use crate::intrinsics::arg_kind;
use crate::kernel_arg::ANY_DEVICE;
use crate::ranges::LaunchHold;
use crate::region::PartitioningStrategy;
use crate::stream::{self, Slot};

/// A kernel that can be launched with the arguments `A`, a tuple: `#[offload::kernel]`
/// implements it for each kernel (each instance of a generic one) and every tuple of arguments
/// its parameters take ([`KernelArg`](crate::KernelArg)). [`intrinsics::offload`](crate::intrinsics::offload)
/// launches through it; `launch!` and `offload!` call the same launcher.
#[diagnostic::on_unimplemented(
    message = "kernel `{Self}` cannot be launched with arguments of type `{A}`",
    note = "the arguments are a tuple with one element per kernel parameter, each as `launch!` \
            takes it (see `KernelArg`)"
)]
pub trait Launch<A> {
    /// Launches the kernel on runtime device `device` (-1: the default device).
    #[doc(hidden)]
    fn launch(
        self,
        device: i64,
        grid: Dim,
        block: Dim,
        shared: SharedBytes,
        args: A,
    ) -> Result<(), Error>;
}

/// A `Region` argument's strategy asked whether the launch's geometry keeps its threads' parts
/// disjoint, before anything is copied.
pub fn check_partition<S: PartitioningStrategy>(
    kernel: &'static str,
    elements: usize,
    geometry: &Geometry,
) -> Result<(), Error> {
    S::check_launch(elements, geometry.grid, geometry.block)
        .map_err(|e| Error::Partition { kernel, message: e.message() })
}

/// How a kernel was declared to be launched: at most `threads` threads a block, at most `axes`
/// along x, y and z (`#[offload::kernel(launch_bounds = ..)]`), and the error's words.
pub(crate) type Bounds = (u32, [u32; 3], &'static str);

/// One launch of `kernel`, as `#[offload::kernel]`'s launchers hand it over, checked before
/// anything is copied: a device to run on, the geometry (within `bounds`), `check` (the
/// arguments' own checks of the geometry: a `Region`'s strategy) and the arguments' devices.
/// `Checked::run` goes on with it; the launch marker's call, if it comes to that, stays in
/// the program's crate, where the argument kinds are its constant operands.
#[inline(always)]
pub fn launch(
    kernel: &'static str,
    device: i64,
    (grid, block, shared): (Dim, Dim, SharedBytes),
    bounds: Option<Bounds>,
    devices: &[i64],
    check: impl FnOnce(&Geometry) -> Result<(), Error>,
) -> Result<Checked, Error> {
    crate::rt::require_device(device)?;
    let geometry = geometry(kernel, grid, block, shared)?;
    if let Some((threads, axes, reason)) = bounds {
        check_launch_bounds(kernel, &geometry, threads, axes, reason)?;
    }
    check(&geometry)?;
    check_devices(kernel, device, devices)?;
    Ok(Checked { kernel, device, geometry })
}

/// A launch that passed [`launch`]'s checks.
pub struct Checked {
    kernel: &'static str,
    device: i64,
    geometry: Geometry,
}

impl Checked {
    /// The geometry that passed the checks. What the runtime's launch is given of it
    /// (`Geometry::slot`, `blocks`, `threads`) is taken by the launcher before the library
    /// sees it, so that a launch along x stays constants.
    #[inline(always)]
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// `ASYNC`, an enqueue on the library's stream of a GPU; else (or on the host-offload
    /// plugin) a synchronous launch: on a GPU through the library's stream, which waits for it,
    /// so that a kernel that faults is an `Error` (libomptarget 19 would end the process).
    /// `Ok(None)` where the kernel ran (or was enqueued) so; else it is the runtime's launch's,
    /// through the marker, and [`Marked::status`] takes the marker's return. Kernels queued by
    /// `launch_async!` finish before the runtime touches the device.
    ///
    /// # Safety
    /// `slots` are the kernel's parameter slots in order, each made from the argument's
    /// [`KernelArg`](crate::KernelArg) impl (whose contract the kinds keep), and their data
    /// stays borrowed until the [`Marked`] launch is dropped; with `ASYNC` they are `PRESENT`
    /// or `LITERAL` alone ([`PresentArg`](crate::PresentArg)).
    #[inline(always)]
    pub unsafe fn run<const ASYNC: bool>(
        self,
        slots: &mut [Slot],
    ) -> Result<Option<Marked>, Error> {
        let Checked { kernel, device, geometry } = self;
        let image = crate::entry::cuda_image;
        // SAFETY (of the launches): per the caller.
        if ASYNC && unsafe { stream::launch_async(image(), device, kernel, geometry, slots) }? {
            return Ok(None);
        }
        // Held until the launch returns: the runtime maps and releases these within it
        // (overlapping `&T` arguments the library maps together, here).
        // SAFETY: per the caller; the hold lasts as long as the `Marked` launch.
        let held = unsafe { check_mapped(kernel, device, slots) }?;
        stream::synchronize_pending(device)?;
        if unsafe { stream::launch_sync(image(), device, kernel, geometry, slots) }? {
            return Ok(None);
        }
        Ok(Some(Marked { kernel, _held: held }))
    }
}

/// A launch left to the runtime's launch, through the marker ([`Checked::run`]), holding what
/// it maps until it returns.
#[must_use]
pub struct Marked {
    kernel: &'static str,
    _held: LaunchHold,
}

impl Marked {
    /// The launch's result from the marker's status; what the launch held is released.
    #[inline(always)]
    pub fn status(self, status: i32) -> Result<(), Error> {
        if status == 0 { Ok(()) } else { Err(Error::LaunchFailed { kernel: self.kernel, status }) }
    }
}

/// Launch geometry along x, y and z: blocks in the grid, or threads in a block. A number is
/// `[n, 1, 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim([u32; 3]);

impl From<u32> for Dim {
    #[inline]
    fn from(x: u32) -> Self {
        Dim([x, 1, 1])
    }
}
impl From<[u32; 3]> for Dim {
    #[inline]
    fn from(d: [u32; 3]) -> Self {
        Dim(d)
    }
}
impl From<(u32, u32, u32)> for Dim {
    #[inline]
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim([x, y, z])
    }
}
impl From<[u32; 2]> for Dim {
    #[inline]
    fn from([x, y]: [u32; 2]) -> Self {
        Dim([x, y, 1])
    }
}
impl From<(u32, u32)> for Dim {
    #[inline]
    fn from((x, y): (u32, u32)) -> Self {
        Dim([x, y, 1])
    }
}

/// The bytes of shared memory a launch gives each block (`launch!(.., shared = BYTES, ..)`):
/// any integer (`threads as usize * 4`, a `u32`, a literal), checked at the launch: a negative
/// count or one over the GPU's most is `Error::InvalidGeometry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedBytes(i128);

macro_rules! shared_bytes_from {
    ($($t:ty),*) => {$(
        impl From<$t> for SharedBytes {
            #[inline]
            fn from(bytes: $t) -> Self {
                SharedBytes(bytes as i128)
            }
        }
    )*};
}
shared_bytes_from!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// Threads in a block on every NVIDIA GPU the cubin targets, in all and along z.
const MAX_BLOCK: u32 = 1024;
const MAX_BLOCK_Z: u32 = 64;
/// Blocks of a grid along y and z (CUDA's limit).
const MAX_GRID_YZ: u32 = 65535;
/// Shared memory of a block on the NVIDIA GPUs with the most (sm_90: 227 KiB).
const MAX_SHARED: u32 = 227 << 10;

/// A launch's geometry, checked against what every NVIDIA GPU the cubin targets launches
/// (CUDA's limits), so that the runtime never refuses it (libomptarget 19 ends the process then).
#[inline]
pub(crate) fn geometry(
    kernel: &'static str,
    grid: Dim,
    block: Dim,
    shared: SharedBytes,
) -> Result<Geometry, Error> {
    let invalid = |reason| Err(Error::InvalidGeometry { kernel, reason });
    let (grid, block) = (grid.0, block.0);
    if grid.contains(&0) || block.contains(&0) {
        return invalid("grid and block must be at least 1 along x, y and z");
    }
    let threads = block.iter().try_fold(1u32, |n, &d| n.checked_mul(d));
    if threads.is_none_or(|t| t > MAX_BLOCK) || block[2] > MAX_BLOCK_Z {
        return invalid("a block has at most 1024 threads, and at most 64 along z");
    }
    if grid[1] > MAX_GRID_YZ || grid[2] > MAX_GRID_YZ {
        return invalid("a grid has at most 65535 blocks along y and along z");
    }
    let blocks = grid.iter().try_fold(1u32, |n, &d| n.checked_mul(d));
    if blocks.is_none_or(|b| b > i32::MAX as u32) {
        return invalid("a grid has fewer than 2^31 blocks in all");
    }
    let shared = match u32::try_from(shared.0) {
        Ok(bytes) if bytes <= MAX_SHARED => bytes,
        Ok(_) | Err(_) if shared.0 >= 0 => {
            return invalid(
                "a block has at most 227 KiB of shared memory (sm_90; less on older GPUs)",
            );
        }
        _ => return invalid("a block's shared memory is a count of bytes: 0 or more"),
    };
    Ok(Geometry { grid, block, shared })
}

/// Checks a launch of a kernel declared with launch bounds (`reason` says which): blocks of at
/// most `threads` threads, and at most `axes` along x, y and z.
#[inline]
pub(crate) fn check_launch_bounds(
    kernel: &'static str,
    geometry: &Geometry,
    threads: u32,
    axes: [u32; 3],
    reason: &'static str,
) -> Result<(), Error> {
    let within = geometry.threads() as u32 <= threads
        && geometry.block.iter().zip(axes).all(|(&block, axis)| block <= axis);
    if !within {
        return Err(Error::InvalidGeometry { kernel, reason });
    }
    Ok(())
}

/// Checks that every present argument lives on the launch's device: a `Preload` made on one
/// device and passed to a launch on another would reach the kernel as an unmapped address.
#[inline]
pub(crate) fn check_devices(
    kernel: &'static str,
    device: i64,
    arguments: &[i64],
) -> Result<(), Error> {
    for &argument in arguments {
        if argument != ANY_DEVICE && argument != device && resolve(argument) != resolve(device) {
            return Err(Error::WrongDevice {
                kernel,
                argument: resolve(argument),
                launch: resolve(device),
            });
        }
    }
    Ok(())
}

/// Checks the data a launch maps around itself (the slots of its plain `&T`/`&mut T`
/// arguments) before the runtime sees it: a range that partly overlaps preloaded data, or a
/// `&mut T` argument, is [`Error::OverlapsMapped`], and new data the device has no room for is
/// [`Error::OutOfMemory`]; libomptarget 19 would end the process on either. `&T` arguments that
/// overlap each other, which the runtime cannot map one after another, are mapped here as one
/// range (`ranges::LaunchPlan`) and their slots' [`Slot::map`] set to 0: the launch's
/// mappers then find them inside it. The returned hold keeps that data marked in the library's
/// record of mappings (and the ranges mapped here) until it is dropped, after the launch. With
/// only present data and values (the kinds are constants) this folds away.
///
/// # Safety
/// The slots' data must stay borrowed until the hold is dropped, and no kernel may use it
/// after; `slots` must be the launch's, on `device`.
#[inline(always)]
pub(crate) unsafe fn check_mapped(
    kernel: &'static str,
    device: i64,
    slots: &mut [Slot],
) -> Result<LaunchHold, Error> {
    if slots.iter().any(Slot::mapped_by_launch) {
        // SAFETY: per the caller.
        unsafe { check_mapped_slots(kernel, device, slots) }
    } else {
        Ok(LaunchHold::NONE)
    }
}

#[inline(never)]
unsafe fn check_mapped_slots(
    kernel: &'static str,
    device: i64,
    slots: &mut [Slot],
) -> Result<LaunchHold, Error> {
    let in_launch = |e| match e {
        Error::OverlapsMapped { bytes, .. } => {
            Error::OverlapsMapped { bytes, kernel: Some(kernel) }
        }
        e => e,
    };
    let arguments: Vec<(usize, usize, bool)> = slots
        .iter()
        .filter(|s| s.mapped_by_launch())
        .map(|s| (s.value as usize, s.size as usize, s.kind == arg_kind::MAP_TO_FROM))
        .collect();
    let plan = crate::ranges::plan_launch(&arguments).map_err(in_launch)?;
    if plan.joins() {
        // The library maps the groups itself: kernels queued by `launch_async!` finish first.
        crate::stream::synchronize_pending(device)?;
    }
    let data = |start: usize| {
        let slot = slots.iter().find(|s| s.mapped_by_launch() && s.value as usize == start);
        slot.expect("a group starts at an argument").value
    };
    // SAFETY: per the caller.
    let hold = unsafe { crate::ranges::hold_launch(device, &plan, data) }.map_err(in_launch)?;
    let grouped = slots.iter_mut().filter(|s| s.mapped_by_launch()).zip(&plan.in_group);
    for (slot, _) in grouped.filter(|&(_, &in_group)| in_group) {
        slot.map = 0;
    }
    Ok(hold)
}

/// A device argument with -1 (the default) replaced by the default device's number, or kept
/// when there is none.
fn resolve(device: i64) -> i64 {
    crate::rt::resolve_device(device).unwrap_or(device)
}

#[cfg(test)]
mod tests {
    use super::{Dim, SharedBytes, geometry};
    use crate::Error;
    use crate::geometry::{Geometry, geometry_in, geometry_slot};

    fn reason(grid: impl Into<Dim>, block: impl Into<Dim>) -> &'static str {
        match geometry("k", grid.into(), block.into(), 0u32.into()) {
            Err(Error::InvalidGeometry { kernel: "k", reason }) => reason,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn geometries_are_checked_against_what_every_gpu_launches() {
        let ok = |g: Dim, b: Dim| geometry("k", g, b, 0u32.into()).unwrap();
        let linear = Geometry { grid: [4096, 1, 1], block: [256, 1, 1], shared: 0 };
        assert_eq!(ok(4096.into(), 256.into()), linear);
        let shared = |bytes: SharedBytes| geometry("k", 1.into(), 32.into(), bytes);
        assert_eq!(shared((227usize << 10).into()).unwrap().shared, 227 << 10);
        assert_eq!(shared(96i32.into()).unwrap().shared, 96);
        for too_much in [((227u32 << 10) + 1).into(), u64::MAX.into()] {
            let refused = shared(too_much);
            assert!(
                matches!(refused, Err(Error::InvalidGeometry { reason, .. }) if reason.contains("227 KiB"))
            );
        }
        let negative = shared((-4i64).into());
        assert!(
            matches!(negative, Err(Error::InvalidGeometry { reason, .. }) if reason.contains("0 or more"))
        );
        assert_eq!(ok([8, 4].into(), (16, 16).into()).threads(), 256);
        assert_eq!(ok([32768, 65535, 1].into(), [1024, 1, 1].into()).blocks(), 32768 * 65535);
        assert!(ok([2, 3, 4].into(), [4, 4, 64].into()).threads() == 1024);
        assert!(reason(0, 1).contains("at least 1"));
        assert!(reason([1, 0, 1], 1).contains("at least 1"));
        assert!(reason(1, [33, 32, 1]).contains("at most 1024 threads"));
        assert!(reason(1, [1, 1, 65]).contains("at most 64 along z"));
        assert!(reason(1, [u32::MAX, 2, 1]).contains("at most 1024 threads"));
        assert!(reason([1, 65536, 1], 1).contains("65535 blocks along y"));
        assert!(reason([1 << 31, 1, 1], 1).contains("fewer than 2^31"));
        assert!(reason([1 << 16, 1 << 15, 1], 1).contains("fewer than 2^31"));
    }

    #[test]
    fn the_geometry_slot_names_the_geometry() {
        let linear = Geometry { grid: [4096, 1, 1], block: [256, 1, 1], shared: 0 };
        let slot = geometry_slot(&linear).addr() as u64;
        // Along x, a constant: threads per block high, blocks low.
        assert_eq!(slot, 256 << 32 | 4096);
        assert_eq!(unsafe { geometry_in(slot) }, linear);
        for other in [
            Geometry { grid: [3, 5, 7], block: [8, 4, 2], shared: 0 },
            Geometry { grid: [4096, 1, 1], block: [256, 1, 1], shared: 1024 },
        ] {
            let slot = geometry_slot(&other).addr() as u64;
            assert_ne!(slot & 1 << 63, 0);
            assert_eq!(unsafe { geometry_in(slot) }, other);
        }
    }
}
