//! Preloaded data for code outside the library's kernels (cuBLAS, cuFFT, NCCL: through cudarc
//! or another binding): a guard's device address, and the stream the device's work is ordered
//! on.
//!
//! ```text
//! use offload::{AsDevicePtr, AsDevicePtrMut};
//!
//! let x = preload(&xs[..]);
//! let mut y = preload_mut(&mut ys[..]);
//! offload::launch_async!(kernels::scale, blocks, 256, (&mut y))?;
//! let (px, py) = (x.device_ptr(), y.device_ptr_mut());
//! px.device().with_cuda_stream(|stream| {
//!     // SAFETY: `CudaStream`'s list: cuBLAS reads n f32 at px, writes n at py, on `stream`.
//!     unsafe { cublas_saxpy_on(stream.as_raw(), n, 2.0, px.addr(), py.addr()) }
//! })?;
//! offload::launch_async!(kernels::scale, blocks, 256, (&mut y))?; // after the saxpy
//! drop(y); // waits for the kernels and the saxpy, then copies back
//! ```
//!
//! A [`DevicePtr`] borrows its guard, so the address cannot outlive the mapping; work enqueued
//! through [`Device::with_cuda_stream`] is waited for, as `launch_async!`'s kernels are, before
//! the guard's end mapper frees the memory or copies it back.

use core::ffi::c_void;
use core::marker::PhantomData;

use crate::cuda::{CuContext, CuStream};
use crate::view::{PresentSlice, PresentSliceMut};
use crate::{Device, Error, Preload, PreloadMut, stream};

/// The device address of data a live guard keeps on a device, for reading.
///
/// On a GPU it is a CUDA device pointer (`CUdeviceptr`) in the GPU's primary context; on the
/// host-offload plugin's devices, the address of the plugin's copy in this process's memory.
/// Empty data has the address 0.
#[derive(Debug)]
pub struct DevicePtr<'a, T: ?Sized> {
    addr: u64,
    bytes: usize,
    device: Device,
    _guard: PhantomData<&'a T>,
}

// Not derived: a derive would ask `T: Copy`, and the address is copied, not the data.
impl<T: ?Sized> Clone for DevicePtr<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for DevicePtr<'_, T> {}

/// The device address of data a live [`PreloadMut`] keeps on a device, for reading and writing:
/// as [`DevicePtr`], borrowing the guard mutably.
#[derive(Debug)]
pub struct DevicePtrMut<'a, T: ?Sized> {
    addr: u64,
    bytes: usize,
    device: Device,
    _guard: PhantomData<&'a mut T>,
}

/// Data on a device that a live guard keeps mapped: [`Preload`], [`PreloadMut`] and their
/// ranges.
pub trait AsDevicePtr<T: ?Sized> {
    /// Its device address, for as long as this borrow lasts. Makes no copy, and does not wait.
    fn device_ptr(&self) -> DevicePtr<'_, T>;
}

/// Data on a device that a live [`PreloadMut`] keeps mapped: the guard and its mutable ranges.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be written on the device",
    label = "read-only, or not on the device",
    note = "a routine writes only into a `PreloadMut` or its `slice_mut` ranges: preload the \
            output with `preload_mut`"
)]
pub trait AsDevicePtrMut<T: ?Sized>: AsDevicePtr<T> {
    /// Its device address for writing, for as long as this borrow lasts. Makes no copy, and
    /// does not wait.
    fn device_ptr_mut(&mut self) -> DevicePtrMut<'_, T>;
}

macro_rules! device_ptrs {
    ($name:ident) => {
        impl<T: ?Sized> $name<'_, T> {
            /// The address, as foreign libraries take it (`CUdeviceptr` on a GPU).
            pub fn addr(&self) -> u64 {
                self.addr
            }

            /// Bytes of data at the address.
            pub fn bytes(&self) -> usize {
                self.bytes
            }

            /// The device the data lives on.
            pub fn device(&self) -> Device {
                self.device
            }
        }

        impl<T> $name<'_, [T]> {
            /// Elements of the slice at the address.
            pub fn len(&self) -> usize {
                self.bytes.checked_div(size_of::<T>()).unwrap_or(0)
            }

            /// Whether the slice is empty.
            pub fn is_empty(&self) -> bool {
                self.bytes == 0
            }
        }
    };
}

device_ptrs!(DevicePtr);
device_ptrs!(DevicePtrMut);

/// A [`DevicePtr`] of `bytes` at device address `addr` (the guard's, found when it mapped
/// the data) on runtime device `device`.
fn shared<'a, T: ?Sized>(addr: u64, bytes: usize, device: i64) -> DevicePtr<'a, T> {
    DevicePtr {
        addr: checked(addr, bytes, device),
        bytes,
        device: Device::from_runtime_id(device),
        _guard: PhantomData,
    }
}

/// A [`DevicePtrMut`] of `bytes` at device address `addr` on runtime device `device`.
fn unique<'a, T: ?Sized>(addr: u64, bytes: usize, device: i64) -> DevicePtrMut<'a, T> {
    DevicePtrMut {
        addr: checked(addr, bytes, device),
        bytes,
        device: Device::from_runtime_id(device),
        _guard: PhantomData,
    }
}

/// `addr`, which a live guard found for its data when it mapped it, or 0 for no bytes (empty
/// data is not mapped). The guard's mapping lasts as long as the guard: only its end mapper (or
/// `reclaim`, which needs the data `&mut`, so no guard) removes it.
fn checked(addr: u64, bytes: usize, device: i64) -> u64 {
    if bytes == 0 {
        return 0;
    }
    assert!(addr != 0, "offload: a live guard's data is not mapped on device {device}");
    addr
}

impl<T: ?Sized> AsDevicePtr<T> for Preload<'_, T> {
    fn device_ptr(&self) -> DevicePtr<'_, T> {
        shared(self.mapped(), self.size_in_bytes(), self.device())
    }
}

impl<T: ?Sized> AsDevicePtr<T> for PreloadMut<'_, T> {
    fn device_ptr(&self) -> DevicePtr<'_, T> {
        shared(self.mapped(), self.size_in_bytes(), self.device())
    }
}

impl<T: ?Sized> AsDevicePtrMut<T> for PreloadMut<'_, T> {
    fn device_ptr_mut(&mut self) -> DevicePtrMut<'_, T> {
        unique(self.mapped(), self.size_in_bytes(), self.device())
    }
}

impl<T> AsDevicePtr<[T]> for PresentSlice<'_, T> {
    fn device_ptr(&self) -> DevicePtr<'_, [T]> {
        shared(self.mapped(), size_of::<T>() * self.len(), self.device())
    }
}

impl<T> AsDevicePtr<[T]> for PresentSliceMut<'_, T> {
    fn device_ptr(&self) -> DevicePtr<'_, [T]> {
        shared(self.mapped(), size_of::<T>() * self.len(), self.device())
    }
}

impl<T> AsDevicePtrMut<[T]> for PresentSliceMut<'_, T> {
    fn device_ptr_mut(&mut self) -> DevicePtrMut<'_, [T]> {
        unique(self.mapped(), size_of::<T>() * self.len(), self.device())
    }
}

/// A GPU's stream as [`Device::with_cuda_stream`] lends it: the stream `launch!`,
/// `launch_async!` and [`crate::Event`] use, in the GPU's primary context (the one the runtime
/// maps data in, which is current while it is lent).
///
/// # Safety of what is enqueued on it
/// Calling a foreign library with these handles is `unsafe`; what it enqueues is sound when:
/// - it is enqueued on this stream, inside the closure that lent it (the waits cover work
///   counted when the closure returns, and nothing enqueued elsewhere);
/// - the device addresses it uses are [`DevicePtr`]s of live guards on this device, taken
///   before the closure ran; it reads only there, and writes only through [`DevicePtrMut`]s;
/// - it reads and writes within each address's [`bytes`](DevicePtr::bytes), and with the
///   element type the guard holds.
///
/// Its work then runs after the kernels launched before it and before those launched after it;
/// a guard's drop, `sync`, `update` and a preload on this device wait for it, and a fault it
/// causes is reported by the next of them, as a kernel's is.
#[derive(Debug)]
pub struct CudaStream {
    ordinal: usize,
    context: CuContext,
    stream: CuStream,
}

impl CudaStream {
    /// The stream, as the CUDA driver and libraries take it (`CUstream`, `cudaStream_t`).
    pub fn as_raw(&self) -> *mut c_void {
        self.stream.cast()
    }

    /// The GPU's primary context (`CUcontext`), current while the stream is lent.
    pub fn context(&self) -> *mut c_void {
        self.context.cast()
    }

    /// The GPU's CUDA ordinal (the driver's number: the runtime numbers devices its own way).
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }
}

impl Device {
    /// Lends this GPU's stream to `enqueue`, with the GPU's primary context current, and counts
    /// the work it enqueues there as the library's own (see [`CudaStream`]); returns what
    /// `enqueue` returned; what it enqueued is counted even if it panics. `Ok(None)`, without
    /// calling `enqueue`, for the host-offload plugin's devices: their data is in host memory
    /// at [`DevicePtr::addr`], and nothing there runs asynchronously. [`Error::Library`] for a
    /// GPU of CUDA ordinal 64 or above, where the library has no stream.
    pub fn with_cuda_stream<R>(
        &self,
        enqueue: impl FnOnce(&CudaStream) -> R,
    ) -> Result<Option<R>, Error> {
        stream::with_stream(self.runtime_id(), |ordinal, context, stream| {
            enqueue(&CudaStream { ordinal, context, stream })
        })
    }
}
