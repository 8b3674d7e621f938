//! `HostBuffer`: page-locked ("pinned") host memory, which the device copies to and from at the
//! link's full speed instead of through a staging buffer.

use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

use crate::{DeviceCopy, Error, rt};

/// A slice of `T` in pinned host memory from the offload runtime's allocator. Preload it (or
/// pass it to a launch) like any slice: `preload(&buf[..])`.
pub struct HostBuffer<T: DeviceCopy + Copy> {
    ptr: NonNull<T>,
    len: usize,
    device: i32,
}

impl<T: DeviceCopy + Copy> HostBuffer<T> {
    /// `len` copies of `value` in pinned memory of the default device: [`Error::HostAllocFailed`]
    /// when the runtime cannot allocate it, [`Error::HostBufferTooLarge`] when `len` elements
    /// would span more bytes than a slice can hold, and the errors of the default device
    /// ([`Error::NoDevice`], [`Error::InvalidDefaultDevice`]).
    pub fn new(len: usize, value: T) -> Result<Self, Error> {
        // Padding would be uninitialised bytes in the buffer, which its preload copies.
        const { T::NO_PADDING };
        let mut buf = Self::uninit(len)?;
        buf.fill(value);
        Ok(buf)
    }

    /// A pinned copy of `data`.
    pub fn from_slice(data: &[T]) -> Result<Self, Error> {
        const { T::NO_PADDING };
        let mut buf = Self::uninit(data.len())?;
        buf.copy_from_slice(data);
        Ok(buf)
    }

    /// Pinned memory for `len` elements, every bit pattern of which is a valid `T`
    /// (`DeviceCopy` types are plain data); callers fill it before handing it out.
    fn uninit(len: usize) -> Result<Self, Error> {
        let device = rt::default_device()?;
        let too_large = Error::HostBufferTooLarge { len, element_bytes: size_of::<T>() };
        // A slice spans at most `isize::MAX` bytes.
        let bytes = len
            .checked_mul(size_of::<T>())
            .filter(|&bytes| isize::try_from(bytes).is_ok())
            .ok_or(too_large)?;
        if bytes == 0 {
            return Ok(HostBuffer { ptr: NonNull::dangling(), len, device });
        }
        let raw = rt::alloc_host(bytes, device).ok_or(Error::HostAllocFailed { bytes })?;
        if raw.as_ptr().align_offset(align_of::<T>()) != 0 {
            // SAFETY: allocated just above on `device`.
            unsafe { rt::free_host(raw, device) };
            return Err(Error::HostAllocFailed { bytes });
        }
        // Start from zeroes: `T` is plain data, so zero bytes are a value the caller overwrites.
        // SAFETY: `bytes` bytes were allocated at `raw`.
        unsafe { core::ptr::write_bytes(raw.as_ptr().cast::<u8>(), 0, bytes) };
        Ok(HostBuffer { ptr: raw.cast::<T>(), len, device })
    }
}

impl<T: DeviceCopy + Copy> Deref for HostBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialised elements live at `ptr` until drop.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceCopy + Copy> DerefMut for HostBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the borrow unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceCopy + Copy> Drop for HostBuffer<T> {
    fn drop(&mut self) {
        if self.len * size_of::<T>() != 0 {
            // Mappings that leaked guards (`mem::forget`) left in this memory go first: the
            // runtime refuses to free pinned memory it still maps, and ends the process. Their
            // queued work (a copy in of `update`, still reading here) is waited for first.
            if crate::reclaim(&mut **self).is_err() {
                // A kernel faulted, and the GPU's context is lost: leaked mappings may stay, and
                // the runtime would end the process at the free. The memory goes at exit.
                return;
            }
            // SAFETY: allocated by `rt::alloc_host` on `device`.
            unsafe { rt::free_host(self.ptr.cast(), self.device) };
        }
    }
}

// SAFETY: the buffer owns its memory like a `Box<[T]>`.
unsafe impl<T: DeviceCopy + Copy + Send> Send for HostBuffer<T> {}
unsafe impl<T: DeviceCopy + Copy + Sync> Sync for HostBuffer<T> {}
