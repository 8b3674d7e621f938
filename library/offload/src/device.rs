//! Devices: how many the runtime has, their names, and preloads on a chosen one.

use core::ffi::c_int;

use crate::preload::{preload_mut_on, preload_on};
use crate::{DeviceCopy, Error, Preload, PreloadMut, cuda, rt};

/// What `offload!`'s `device = D` names: a device's index (an `i32`, as upstream's, or a
/// `u32`; a negative literal does not compile, and a negative value is
/// `Error::NegativeDevice`), or a [`Device`]. The launch checks the index.
pub trait LaunchDevice {
    /// The runtime's number of the device.
    fn runtime_id(&self) -> Result<i64, Error>;
}

impl LaunchDevice for u32 {
    #[inline(always)]
    fn runtime_id(&self) -> Result<i64, Error> {
        Ok(i64::from(*self))
    }
}

impl LaunchDevice for i32 {
    #[inline(always)]
    fn runtime_id(&self) -> Result<i64, Error> {
        match *self {
            id @ 0.. => Ok(i64::from(id)),
            id => Err(Error::NegativeDevice { id: i64::from(id) }),
        }
    }
}

impl LaunchDevice for Device {
    #[inline(always)]
    fn runtime_id(&self) -> Result<i64, Error> {
        Ok(Device::runtime_id(self))
    }
}

impl LaunchDevice for &Device {
    #[inline(always)]
    fn runtime_id(&self) -> Result<i64, Error> {
        Ok(Device::runtime_id(self))
    }
}

/// One of the runtime's devices. The runtime numbers the NVIDIA GPUs first (their image
/// registers first), then the host-offload plugin's devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    id: i32,
}

impl Device {
    /// How many devices the runtime has (0 with no usable device and no host-offload image).
    pub fn count() -> usize {
        rt::device_count()
    }

    /// Device number `id`.
    pub fn get(id: usize) -> Result<Self, Error> {
        let count = Self::count();
        match i32::try_from(id) {
            Ok(id32) if id < count => Ok(Device { id: id32 }),
            _ => Err(Error::NoSuchDevice { id, count }),
        }
    }

    /// The device `preload`, `preload_mut` and `launch!` use when none is named:
    /// `Error::InvalidDefaultDevice` when the runtime's default (`OMP_DEFAULT_DEVICE`) is not
    /// one of its devices.
    pub fn default_device() -> Result<Self, Error> {
        rt::default_device().map(|id| Device { id })
    }

    /// The runtime's number for this device.
    #[inline]
    pub fn id(&self) -> usize {
        self.id as usize
    }

    /// The device of runtime number `id`, which the runtime has (a guard's).
    pub(crate) fn from_runtime_id(id: i64) -> Device {
        Device { id: id as i32 }
    }

    /// The number as the runtime's entry points take it.
    #[doc(hidden)]
    #[inline]
    pub fn runtime_id(&self) -> i64 {
        i64::from(self.id)
    }

    /// For people to read: the GPU's name, or the host-offload device's number.
    pub fn name(&self) -> String {
        describe(self.id as usize)
    }

    /// Free and total bytes of this GPU's memory, as the CUDA driver counts them; `None` for a
    /// host-offload device (its memory is the host's). A preload of new data larger than the
    /// free memory (less a reserve for the driver) is `Error::OutOfMemory`.
    pub fn memory(&self) -> Option<DeviceMemory> {
        let ordinal = rt::gpu_ordinal(self.id as usize)?;
        crate::memory::gpu_memory(ordinal).map(|(free, total)| DeviceMemory { free, total })
    }

    /// This GPU's multiprocessors (132 on an H200), for sizing a grid-stride loop's grid to
    /// the chip; `None` for a host-offload device.
    pub fn multiprocessors(&self) -> Option<u32> {
        let ordinal = rt::gpu_ordinal(self.id as usize)?;
        cuda::api()?.multiprocessor_count(c_int::try_from(ordinal).ok()?)
    }

    /// Waits until the kernels launched asynchronously on this device have finished, and the
    /// copies and fills guards queued there.
    pub fn synchronize(&self) -> Result<(), Error> {
        crate::stream::synchronize_pending(self.runtime_id())
    }

    /// [`crate::preload`] on this device.
    #[inline]
    pub fn preload<'a, T: ?Sized + DeviceCopy>(
        &self,
        data: &'a T,
    ) -> Result<Preload<'a, T>, Error> {
        const { T::NO_PADDING };
        preload_on(self.runtime_id(), data)
    }

    /// [`crate::preload_mut`] on this device.
    #[inline]
    pub fn preload_mut<'a, T: ?Sized + DeviceCopy>(
        &self,
        data: &'a mut T,
    ) -> Result<PreloadMut<'a, T>, Error> {
        const { T::NO_PADDING };
        preload_mut_on(self.runtime_id(), data)
    }
}

/// A GPU's memory in bytes: [`Device::memory`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceMemory {
    /// Not allocated by anyone (this process, the runtime's pools, other processes).
    pub free: usize,
    /// The GPU's memory.
    pub total: usize,
}

/// What a kernel launched on the default device runs on, for people to read: the NVIDIA GPU's
/// name, or the runtime's x86_64 host-offload plugin; where the default device is none (no
/// device at all, or `OMP_DEFAULT_DEVICE` naming none of the runtime's), "no offload device"
/// and why.
pub fn device_name() -> String {
    match rt::default_device() {
        Ok(id) if rt::gpu_ordinal(id as usize).is_some() => describe(id as usize),
        Ok(_) => "host-offload x86_64 (libomptarget host plugin, no GPU)".to_owned(),
        // Its message says "no offload device" already.
        Err(e @ crate::Error::NoDevice) => e.to_string(),
        Err(e) => format!("no offload device ({e})"),
    }
}

/// Runtime device `id` for people to read.
fn describe(id: usize) -> String {
    match rt::gpu_ordinal(id) {
        Some(ordinal) => {
            cuda_device_name(ordinal as i32).unwrap_or_else(|| format!("CUDA device {ordinal}"))
        }
        None => format!(
            "host-offload x86_64 device {} (libomptarget host plugin)",
            id - rt::runtime_gpu_count().min(id)
        ),
    }
}

/// GPU `ordinal`'s name from the CUDA driver, if it has one.
fn cuda_device_name(ordinal: i32) -> Option<String> {
    cuda::api()?.device_name(ordinal).map(|name| format!("{name} (CUDA)"))
}
