//! `Preload` and `PreloadMut`: data kept on the device across launches, guarded by a borrow.

use core::marker::PhantomData;

use crate::intrinsics::{self, preload_kind, update_direction};
use crate::{DeviceCopy, Error, ranges, rt, stream};

/// The runtime's "default device" argument.
pub(crate) const DEFAULT_DEVICE: i64 = -1;

/// A read-only copy of `T` on the device, made once by [`preload`].
///
/// The source stays shared-borrowed while this lives, so the host can read it but not change
/// it: the two copies cannot drift apart. Dropping it releases the device copy without copying
/// anything back.
///
/// A `Preload` of data inside data already on the device (another `Preload`'s, a struct's
/// field) takes no new allocation and shares that device copy, but copies its own bytes in
/// again: nothing proves the host left them alone since (the guard that copied them may have
/// been leaked with `mem::forget` and the memory changed or reused). To share a live guard's
/// copy without a copy, pass its views ([`Preload::slice`]) instead.
#[must_use = "dropping a Preload releases the device copy at once"]
pub struct Preload<'a, T: ?Sized> {
    data: &'a T,
    device: i64,
    /// The data's device address (`mapped_address`).
    mapped: u64,
}

/// A read-write copy of `T` on the device, made once by [`preload_mut`].
///
/// The source stays mutably borrowed while this lives: the host can neither read nor write it,
/// since the device holds the current value. Dropping it copies the device data back into the
/// source (the "return mapper") and releases the device copy.
#[must_use = "dropping a PreloadMut copies the data back and releases the device copy at once"]
pub struct PreloadMut<'a, T: ?Sized> {
    data: *mut T,
    device: i64,
    /// Whether a copy in of the host data may still be queued on the device's stream, so that
    /// the host must wait before writing it ([`host_settled`](Self::host_settled)).
    copy_in_queued: bool,
    /// The data's device address (`mapped_address`).
    mapped: u64,
    _borrow: PhantomData<&'a mut T>,
}

/// Copies `data` to the device once; see [`Preload`]. Panics where [`try_preload`] would fail.
#[track_caller]
pub fn preload<T: ?Sized + DeviceCopy>(data: &T) -> Preload<'_, T> {
    const { T::NO_PADDING };
    preload_on(DEFAULT_DEVICE, data).unwrap_or_else(|e| panic!("offload::preload: {e}"))
}

/// Copies `data` to the device once and keeps it there for mutation by kernels; see
/// [`PreloadMut`]. Panics where [`try_preload_mut`] would fail.
#[track_caller]
pub fn preload_mut<T: ?Sized + DeviceCopy>(data: &mut T) -> PreloadMut<'_, T> {
    const { T::NO_PADDING };
    preload_mut_on(DEFAULT_DEVICE, data).unwrap_or_else(|e| panic!("offload::preload_mut: {e}"))
}

/// Like [`preload`], returning the [`Error`] instead of panicking: [`Error::NoDevice`] where
/// there is no device, [`Error::InvalidDefaultDevice`] where the default device
/// (`OMP_DEFAULT_DEVICE`) is none of the runtime's, [`Error::OutOfMemory`] where the device has
/// no room for the data, and [`Error::OverlapsMapped`] for data that partly overlaps preloaded
/// data. The library checks these before asking the runtime, since libomptarget 19 ends the
/// process on a mapping it cannot make (its mapper entry points report nothing).
pub fn try_preload<T: ?Sized + DeviceCopy>(data: &T) -> Result<Preload<'_, T>, Error> {
    const { T::NO_PADDING };
    preload_on(DEFAULT_DEVICE, data)
}

/// Like [`preload_mut`], returning the [`Error`] instead of panicking; see [`try_preload`].
pub fn try_preload_mut<T: ?Sized + DeviceCopy>(data: &mut T) -> Result<PreloadMut<'_, T>, Error> {
    const { T::NO_PADDING };
    preload_mut_on(DEFAULT_DEVICE, data)
}

/// A preload on `device` (a runtime device number, or -1 for the default).
///
/// Its callers, the public preloads, evaluate `T::NO_PADDING` first ([`DeviceCopy`]'s check
/// that a generic struct has no padding with the type arguments it is given): each in its own
/// body, so that the compile error names the program's call of that function.
#[inline(always)]
pub(crate) fn preload_on<T: ?Sized + DeviceCopy>(
    device: i64,
    data: &T,
) -> Result<Preload<'_, T>, Error> {
    let (ptr, bytes) = (data as *const T as *const u8, size_of_val(data));
    let device = map::<{ preload_kind::READ }>(device, ptr, bytes)?;
    Ok(Preload { data, device, mapped: mapped_address(device, ptr, bytes) })
}

/// A mutable preload on `device` (a runtime device number, or -1 for the default). Its callers
/// evaluate `T::NO_PADDING`, as [`preload_on`]'s do.
#[inline(always)]
pub(crate) fn preload_mut_on<T: ?Sized + DeviceCopy>(
    device: i64,
    data: &mut T,
) -> Result<PreloadMut<'_, T>, Error> {
    let (ptr, bytes) = (data as *mut T as *const u8, size_of_val(data));
    let device = map::<{ preload_kind::READ_WRITE }>(device, ptr, bytes)?;
    let mapped = mapped_address(device, ptr, bytes);
    Ok(PreloadMut { data, device, copy_in_queued: false, mapped, _borrow: PhantomData })
}

/// The device address a guard's data has while the guard keeps it mapped, asked of the
/// runtime once, here, rather than by every launch it is passed to (a lookup in the runtime's
/// table under its lock: 0.10-0.13 us on an x86_64 host, two of them in a saxpy launch that
/// costs about 4 us on an H200); 0 for empty data, which is not mapped.
fn mapped_address(device: i64, ptr: *const u8, bytes: usize) -> u64 {
    let Ok(device) = core::ffi::c_int::try_from(device) else { return 0 };
    if bytes == 0 {
        return 0;
    }
    rt::mapped_ptr(ptr, device).map_or(0, |address| address.as_ptr() as usize as u64)
}

/// The begin mapper of one preload, or, for a `Preload` of data already mapped, the copy in
/// of its bytes ([`ranges::Step::Refresh`]).
///
/// LLVM 19's mapper entry points return nothing: a mapping the runtime cannot make ends the
/// process under `OMP_TARGET_OFFLOAD=MANDATORY` or `DEFAULT`, and one on the host's device
/// number does nothing. With offloading disabled there is no device, and the default device
/// may be none of the runtime's: [`rt::require_device`] reports both first.
///
/// Returns the device's number (the default's, for -1), which the guard keeps: its data goes
/// back from where it was mapped, whatever the default is by then.
#[inline(always)]
fn map<const KIND: i64>(device: i64, ptr: *const u8, bytes: usize) -> Result<i64, Error> {
    // The mappers below are given `device` as it came (-1 stays the runtime's "default"), which
    // is `resolved` on this thread until the guard is made; the library's own record and
    // stream take `resolved`, not asking the runtime for the default again.
    let resolved = rt::require_device(device)?;
    if bytes == 0 {
        // Nothing to copy: the runtime is not asked to map an empty range.
        return Ok(resolved);
    }
    let write = KIND == preload_kind::READ_WRITE;
    // The runtime's copies must not overlap a kernel still queued on the library's stream.
    stream::synchronize_pending(resolved)?;
    // SAFETY: a `PreloadMut`'s data is borrowed `&mut` by the guard being made; no kernel uses
    // it (synchronised above).
    match unsafe { ranges::acquire(resolved, ptr, bytes, write) }? {
        // (Only a release is counted.)
        ranges::Step::Counted => {}
        ranges::Step::Runtime(settle) => {
            // SAFETY: `ptr..ptr+bytes` is borrowed for as long as the guard that releases it
            // lives.
            unsafe { intrinsics::preload(device, ptr, bytes as i64, KIND) };
            ranges::settle(settle);
        }
        // Only a `Preload` is refreshed (a `PreloadMut` copies ALWAYS).
        ranges::Step::Refresh(settle) => refresh(device, ptr, bytes, false, settle),
        ranges::Step::MapRefresh(settle) => refresh(device, ptr, bytes, true, settle),
    }
    Ok(resolved)
}

/// A `Preload` of present data ([`ranges::Step::Refresh`]): the host may have changed it since
/// it was copied in, so it is copied again, after the begin mapper of the readers' reference
/// where `take_reference`. Out of line and not generic: the common paths of `map` keep one
/// mapper call.
#[inline(never)]
fn refresh(
    device: i64,
    ptr: *const u8,
    bytes: usize,
    take_reference: bool,
    settle: ranges::Settle,
) {
    if take_reference {
        // SAFETY: `ptr..ptr+bytes` is borrowed by the guard being made, which releases it.
        unsafe { intrinsics::preload(device, ptr, bytes as i64, preload_kind::READ) };
    }
    // SAFETY: the range is mapped (inside the root the record found) and borrowed.
    unsafe { intrinsics::update(device, ptr, bytes as i64, update_direction::TO_DEVICE) };
    ranges::settle(settle);
}

/// The end ("return") mapper of one preload, unless [`ranges`] only counts it.
#[inline(always)]
fn unmap<const KIND: i64>(device: i64, ptr: *const u8, bytes: usize) {
    if bytes == 0 {
        return;
    }
    let write = KIND == preload_kind::READ_WRITE;
    if let ranges::Step::Runtime(settle) = ranges::release(device, ptr as usize, bytes, write) {
        // Kernels queued on the library's stream finish before the copy back and the release.
        stream::synchronize_pending_or_exit(device);
        // SAFETY: the range was mapped by `map` with the same kind and is still borrowed.
        unsafe { intrinsics::release(device, ptr, bytes as i64, KIND) };
        ranges::settle(settle);
    }
}

/// Releases the device copies that leaked guards (`mem::forget` of a `Preload` or
/// `PreloadMut`) left of any part of `data`, on every device, and returns how many mappings
/// went. The `&mut` borrow proves that no live guard holds any of it. A leaked guard's mapping
/// otherwise stays for the life of the process, and the runtime cannot map a larger range
/// around it: a later `preload` or `&T` launch argument enclosing it is
/// [`Error::OverlapsMapped`] until this is called. (`preload_mut` and `&mut T` launch arguments
/// release such mappings themselves.) Mappings that reach outside `data` stay. Kernels still
/// queued by `launch_async!` (and guards' queued copies and fills) are waited for first:
/// [`Error::Cuda`] if one faulted.
pub fn reclaim<T: ?Sized>(data: &mut T) -> Result<usize, Error> {
    let bytes = size_of_val(data);
    if bytes == 0 {
        return Ok(0);
    }
    // SAFETY: lent `&mut` for the call.
    unsafe { ranges::discard_leaked(None, data as *mut T as *const u8, bytes) }
}

impl<T: ?Sized> Preload<'_, T> {
    /// The runtime device number the copy lives on (the default device's when it was made).
    pub(crate) fn device(&self) -> i64 {
        self.device
    }

    /// The device address of the copy's first byte, 0 where it is empty.
    pub(crate) fn mapped(&self) -> u64 {
        self.mapped
    }

    /// The host data this copy was made from.
    pub fn host(&self) -> &T {
        self.data
    }

    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.data as *const T as *const u8
    }

    /// Size of the device copy in bytes.
    pub fn size_in_bytes(&self) -> usize {
        size_of_val(self.data)
    }
}

impl<T: ?Sized> PreloadMut<'_, T> {
    /// The runtime device number the copy lives on (the default device's when it was made).
    pub(crate) fn device(&self) -> i64 {
        self.device
    }

    /// The device address of the copy's first byte, 0 where it is empty.
    pub(crate) fn mapped(&self) -> u64 {
        self.mapped
    }

    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.data as *const u8
    }

    /// The host source, through which only `&mut self` methods may read or write, and only
    /// what they copied from the device or are about to copy to it.
    pub(crate) fn source(&self) -> *mut T {
        self.data
    }

    /// The host source as a shared reference, for its address and length only.
    ///
    /// # Safety
    /// The caller must not read through it: the current value lives on the device.
    pub(crate) unsafe fn device_view(&self) -> &T {
        // SAFETY: `data` comes from a live `&mut T` whose borrow this guard holds.
        unsafe { &*self.data }
    }

    /// Size of the device copy in bytes.
    pub fn size_in_bytes(&self) -> usize {
        // SAFETY: `data` comes from a live `&mut T` whose borrow this guard holds.
        size_of_val(unsafe { &*self.data })
    }

    /// Copies the device data back to the host now and lends it for reading; the data stays
    /// on the device. While the returned reference lives, `self` is borrowed, so no kernel can
    /// change the device copy behind it.
    pub fn sync(&mut self) -> &T {
        self.copy::<{ update_direction::FROM_DEVICE }>();
        // SAFETY: the host copy is current, and `&mut self` makes this the only access.
        unsafe { &*self.data }
    }

    /// Lends the host data for editing, then copies it to the device: the way to change
    /// preloaded data between launches without ending the region. The host data is whatever
    /// it was at the last copy from the device (the preload, or [`sync`](Self::sync)): call
    /// `sync` first to edit the current values.
    pub fn update<R>(&mut self, edit: impl FnOnce(&mut T) -> R) -> R {
        self.host_settled();
        // SAFETY: `&mut self` makes this the only access to the borrowed source, and no copy
        // in still reads it (`host_settled`).
        let result = edit(unsafe { &mut *self.data });
        self.copy::<{ update_direction::TO_DEVICE }>();
        result
    }

    /// Sets every byte of the device copy to `byte` (`write_bytes(0)`: zeroes, a valid value
    /// of every [`DeviceCopy`] type), as `cudaMemsetAsync` does: on a GPU, queued on the
    /// library's stream after the kernels `launch_async!` queued there and not waited for, so
    /// the next launch sees it; on the host-offload plugin written in place (its memory is this
    /// process's), on a GPU without the library's stream copied through the runtime. The host
    /// data is left as it was: the device copy is the current value, as after a kernel.
    pub fn write_bytes(&mut self, byte: u8) {
        let (host, bytes) = (self.as_ptr(), self.size_in_bytes());
        if bytes == 0 {
            return;
        }
        // SAFETY: the guard's whole mapping, borrowed mutably by it.
        match unsafe { stream::fill(self.device, host, bytes, byte) } {
            Ok(true) => {}
            Ok(false) => {
                stream::synchronize_pending_or_exit(self.device);
                // SAFETY: as above; the kernels before it are done.
                if !unsafe { rt::fill_mapped(host, bytes, self.device, byte) } {
                    stream::exit_with(Error::Library {
                        library: "libomptarget",
                        call: "omp_target_memcpy",
                        message: format!(
                            "could not set the {bytes} bytes of a device copy (its address is \
                             not mapped on device {}, or the copy failed)",
                            self.device
                        ),
                    });
                }
            }
            Err(e) => stream::exit_with(e),
        }
    }

    fn copy<const DIRECTION: i64>(&mut self) {
        let bytes = self.size_in_bytes();
        self.copy_bytes::<DIRECTION>(self.as_ptr(), bytes);
    }

    /// Copies `bytes` at `ptr`, which must lie inside this guard's data, after the kernels
    /// queued on its device: on the library's stream where the device is a GPU (a copy in is
    /// not waited for), else by one update mapper call. The direction is a const parameter:
    /// the lowering needs it as a constant in the marker call, whether or not this is inlined.
    /// A failure ends the process, as the runtime's own failed copy does (see `sync`).
    pub(crate) fn copy_bytes<const DIRECTION: i64>(&mut self, ptr: *const u8, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let direction = match DIRECTION {
            update_direction::TO_DEVICE => stream::Direction::ToDevice,
            _ => stream::Direction::ToHost,
        };
        // SAFETY: the range is inside this guard's mapping and borrowed by it (`&mut self`);
        // the host writes the guard's data only after `host_settled`, and a copy back waits for
        // the stream, copies in included.
        match unsafe { stream::update(self.device, direction, ptr, bytes) } {
            // A copy back waits for the stream, and so for any copy in before it.
            Ok(true) => self.copy_in_queued = direction == stream::Direction::ToDevice,
            Ok(false) => {
                // Kernels queued on the library's stream finish before the runtime's copy.
                stream::synchronize_pending_or_exit(self.device);
                // SAFETY: as above.
                unsafe { intrinsics::update(self.device, ptr, bytes as i64, DIRECTION) };
            }
            Err(e) => stream::exit_with(e),
        }
    }

    /// Waits for this guard's device when a copy in of its host data may still be queued there,
    /// before the host data is lent for writing.
    pub(crate) fn host_settled(&mut self) {
        if core::mem::take(&mut self.copy_in_queued) {
            stream::synchronize_pending_or_exit(self.device);
        }
    }
}

impl<T: ?Sized> Drop for Preload<'_, T> {
    fn drop(&mut self) {
        unmap::<{ preload_kind::READ }>(self.device, self.as_ptr(), self.size_in_bytes());
    }
}

impl<T: ?Sized> Drop for PreloadMut<'_, T> {
    fn drop(&mut self) {
        unmap::<{ preload_kind::READ_WRITE }>(self.device, self.as_ptr(), self.size_in_bytes());
    }
}

// SAFETY: the guards only hold the borrow; the device data is reached through the runtime,
// which is thread safe.
unsafe impl<T: ?Sized + Send> Send for PreloadMut<'_, T> {}
unsafe impl<T: ?Sized + Sync> Sync for PreloadMut<'_, T> {}
