//! `offload::Error`: what can go wrong at run time, as a value.

use core::fmt;

/// An offload operation that did not happen, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The runtime reports no device (and no host-offload image could stand in for one).
    NoDevice,
    /// Pinned host memory could not be allocated (`HostBuffer`): the runtime's allocator
    /// returned nothing for this many bytes.
    HostAllocFailed { bytes: usize },
    /// A `HostBuffer` of `len` elements of `element_bytes` each: more bytes than a slice can
    /// hold (`isize::MAX`), so nothing was asked of the runtime.
    HostBufferTooLarge { len: usize, element_bytes: usize },
    /// `__tgt_target_kernel` returned a failure status for this kernel (the runtime's launch: the
    /// host-offload plugin, or `OFFLOAD_LAUNCH=runtime`). libomptarget 19 ends the process itself
    /// when a kernel faults there; on a GPU the library launches, and a fault is [`Error::Cuda`].
    LaunchFailed { kernel: &'static str, status: i32 },
    /// Data that partly overlaps, or encloses, data already preloaded on its device (or, for a
    /// launch, a `&mut` argument of the same launch): the runtime cannot map it (libomptarget 19
    /// would end the process). `kernel` names the kernel when a plain `&T`/`&mut T` argument of
    /// its launch is that data, and is `None` for a preload. (Plain `&T` arguments may overlap
    /// each other: the launch maps them together.) Data a leaked guard left mapped counts as
    /// preloaded until [`reclaim`](crate::reclaim) releases it.
    OverlapsMapped { bytes: usize, kernel: Option<&'static str> },
    /// The device has no room for this much new data: `available` is what it has (the GPU's
    /// free memory less a reserve for the driver, or the host's memory and swap for the
    /// host-offload plugin). Nothing was mapped, and earlier mappings are intact.
    OutOfMemory { bytes: usize, available: usize },
    /// A present argument lives on another device than the launch.
    WrongDevice { kernel: &'static str, argument: i64, launch: i64 },
    /// There is no device with this number.
    NoSuchDevice { id: usize, count: usize },
    /// The runtime's default device (`OMP_DEFAULT_DEVICE`, or `omp_set_default_device`) is not
    /// one of its `count` offload devices: a preload or launch that names no device has nowhere
    /// to go. (`id == count` is the host itself, the OpenMP "initial device", which runs no
    /// kernels of this library; libomptarget 19 would skip the copies there, and end the
    /// process past it.)
    InvalidDefaultDevice { id: i64, count: usize },
    /// The launch geometry cannot be expressed to this runtime.
    InvalidGeometry { kernel: &'static str, reason: &'static str },
    /// The partitioning strategy of a [`Region`](crate::Region) argument refuses the launch's
    /// geometry ([`PartitioningStrategy::check_launch`](crate::PartitioningStrategy)): its
    /// threads' parts would not be disjoint. Nothing was copied or launched.
    Partition { kernel: &'static str, message: &'static str },
    /// A device index below 0 (`offload!`'s `device`, or `intrinsics::offload`'s below -1):
    /// devices are numbered from 0.
    NegativeDevice { id: i64 },
    /// A call of the CUDA driver failed (asynchronous launches and their synchronisation): the
    /// call, the driver's `CUresult` and its message. A kernel that faulted is reported by the
    /// next synchronisation of its stream.
    Cuda { call: &'static str, code: i32, message: &'static str },
    /// A present argument of an asynchronous launch is not mapped on the GPU the launch was
    /// enqueued on (the runtime's device numbering is not the CUDA driver's).
    NotPresent { kernel: &'static str },
    /// `Event::elapsed_ms` of two events recorded on different devices.
    EventDevices,
    /// A routine of a vendor library (`offload-blas`'s) refused its operands before anything
    /// ran: shapes that do not agree, a leading dimension shorter than a row, data shorter
    /// than its shape, operands on different devices, sizes beyond the library's `int`. (Host
    /// only, as the next: the NVIDIA image has no `String`.)
    #[cfg(not(target_arch = "nvptx64"))]
    InvalidOperands { routine: &'static str, reason: String },
    /// A vendor library failed, or could not be loaded, or the library cannot lend it a GPU's
    /// stream (`Device::with_cuda_stream`): the library, the call and what it said (or what
    /// to do).
    #[cfg(not(target_arch = "nvptx64"))]
    Library { library: &'static str, call: &'static str, message: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDevice => f.write_str(
                "no offload device is available (OMP_TARGET_OFFLOAD=DISABLED, or no GPU and no \
                 host-offload image registered: build the program with `cargo offload`)",
            ),
            Error::HostAllocFailed { bytes } => write!(
                f,
                "could not allocate {bytes} bytes of pinned host memory for a HostBuffer (the \
                 offload runtime's allocator refused them: ask for fewer, drop other HostBuffers \
                 first, or use ordinary memory such as a Vec, which preloads and launches take \
                 too, copied at a lower speed)"
            ),
            Error::HostBufferTooLarge { len, element_bytes } => write!(
                f,
                "a HostBuffer of {len} elements of {element_bytes} bytes would be {} bytes, more \
                 than a slice can hold (isize::MAX bytes): ask for fewer elements",
                *len as u128 * *element_bytes as u128
            ),
            Error::LaunchFailed { kernel, status } => {
                write!(f, "launch of kernel `{kernel}` failed with runtime status {status}")
            }
            Error::OverlapsMapped { bytes, kernel: None } => write!(
                f,
                "a preload of {bytes} bytes partly overlaps, or encloses, data already preloaded \
                 (preload the whole range first and take ranges of it, or keep the preloads \
                 disjoint; `offload::reclaim` releases what leaked guards left)"
            ),
            Error::OverlapsMapped { bytes, kernel: Some(kernel) } => write!(
                f,
                "the launch of kernel `{kernel}` would map an argument of {bytes} bytes that \
                 partly overlaps, or encloses, data already mapped (preloaded data, or a `&mut` \
                 argument of the launch): pass the Preload, or a range of it, in place of the \
                 plain reference, or preload the whole range first (`offload::reclaim` releases \
                 what leaked guards left)"
            ),
            Error::OutOfMemory { bytes, available } => write!(
                f,
                "the device has room for {available} more bytes, not {bytes} (free device \
                 memory first, or split the data and preload it a part at a time)"
            ),
            Error::WrongDevice { kernel, argument, launch } => write!(
                f,
                "kernel `{kernel}` launches on device {launch} but an argument is preloaded on device {argument} (preload it with the launch's Device)"
            ),
            Error::NoSuchDevice { id, count } => {
                write!(
                    f,
                    "there is no offload device {id} (the runtime has {count}: 0 to {})",
                    count.saturating_sub(1)
                )
            }
            Error::InvalidDefaultDevice { id, count } => {
                write!(
                    f,
                    "the default offload device is {id} (OMP_DEFAULT_DEVICE, or \
                     omp_set_default_device), but "
                )?;
                match count {
                    0 => f.write_str("the runtime has no offload device")?,
                    1 => f.write_str("the runtime's one offload device is 0")?,
                    _ => write!(f, "the runtime's offload devices are 0 to {}", count - 1)?,
                }
                if *id == *count as i64 {
                    write!(f, ", and {id} is the host itself, which runs no kernels here")?;
                }
                f.write_str(
                    ": set OMP_DEFAULT_DEVICE to one of them, or name a device with \
                     offload::Device::get",
                )
            }
            Error::InvalidGeometry { kernel, reason } => {
                write!(f, "invalid launch geometry for kernel `{kernel}`: {reason}")
            }
            Error::Partition { kernel, message } => write!(
                f,
                "a Region argument of kernel `{kernel}` refuses the launch's geometry: {message}"
            ),
            Error::NegativeDevice { id } => write!(
                f,
                "device {id} is negative: devices are numbered from 0 (offload::intrinsics::\
                 offload_get_num_devices() says how many); leave the device out for the default"
            ),
            Error::Cuda { call, code, message } => {
                write!(f, "CUDA driver call {call} failed with error {code}: {message}")
            }
            Error::NotPresent { kernel } => write!(
                f,
                "an argument of the asynchronous launch of kernel `{kernel}` is not present on \
                 its GPU (the runtime numbers its devices unlike the CUDA driver; use launch!)"
            ),
            Error::EventDevices => f.write_str(
                "the two events were recorded on different devices, whose clocks are not one \
                 (time each device's work with events of its own)",
            ),
            #[cfg(not(target_arch = "nvptx64"))]
            Error::InvalidOperands { routine, reason } => {
                write!(f, "invalid operands for {routine}: {reason}")
            }
            #[cfg(not(target_arch = "nvptx64"))]
            Error::Library { library, call, message } => {
                write!(f, "{library} call {call} failed: {message}")
            }
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl std::error::Error for Error {}
