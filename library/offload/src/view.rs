//! Sub-ranges of preloaded slices: passed to kernels without new copies (the runtime finds a
//! range inside a present mapping and hands the kernel the matching device address), and
//! copied to or from the host alone (`sync_range`, `update_range`).

use core::marker::PhantomData;
use core::ops::{Bound, RangeBounds};

use crate::intrinsics::update_direction;
use crate::{DeviceCopy, Preload, PreloadMut};

/// A read-only range of a [`Preload`]ed or [`PreloadMut`]ed slice, already on the device.
pub struct PresentSlice<'a, T> {
    data: *const T,
    len: usize,
    device: i64,
    /// The range's device address, 0 where the guard's data is empty.
    mapped: u64,
    _borrow: PhantomData<&'a [T]>,
}

/// A read-write range of a [`PreloadMut`]ed slice, already on the device.
pub struct PresentSliceMut<'a, T> {
    data: *mut T,
    len: usize,
    device: i64,
    /// The range's device address, 0 where the guard's data is empty.
    mapped: u64,
    _borrow: PhantomData<&'a mut [T]>,
}

/// The device address of element `start` of a guard's slice whose first element is at
/// `mapped` (0, for an empty guard, stays 0: the launches then ask the runtime).
fn element_address<T>(mapped: u64, start: usize) -> u64 {
    if mapped == 0 { 0 } else { mapped + (start * size_of::<T>()) as u64 }
}

/// `range` within `0..len`, as `(start, end)`; panics like slice indexing when outside.
#[track_caller]
fn bounds(range: impl RangeBounds<usize>, len: usize) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1).expect("range start overflows"),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1).expect("range end overflows"),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end && end <= len,
        "range {start}..{end} out of the preloaded slice of length {len}"
    );
    (start, end)
}

impl<T: DeviceCopy> Preload<'_, [T]> {
    /// The slice's length.
    pub fn len(&self) -> usize {
        self.host().len()
    }

    /// Whether the slice is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements `range` of the preloaded slice, to pass to a `&[T]` kernel parameter.
    #[track_caller]
    pub fn slice(&self, range: impl RangeBounds<usize>) -> PresentSlice<'_, T> {
        let (start, end) = bounds(range, self.host().len());
        PresentSlice {
            data: self.host()[start..end].as_ptr(),
            len: end - start,
            device: self.device(),
            mapped: element_address::<T>(self.mapped(), start),
            _borrow: PhantomData,
        }
    }
}

impl<T: DeviceCopy> PreloadMut<'_, [T]> {
    /// The slice's length (its elements live on the device: they are not readable here).
    pub fn len(&self) -> usize {
        // SAFETY: only the length is taken.
        unsafe { self.device_view() }.len()
    }

    /// Whether the slice is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements `range`, to pass to a `&[T]` kernel parameter.
    #[track_caller]
    pub fn slice(&self, range: impl RangeBounds<usize>) -> PresentSlice<'_, T> {
        // SAFETY: only the address and length are taken.
        let all = unsafe { self.device_view() };
        let (start, end) = bounds(range, all.len());
        PresentSlice {
            data: all[start..end].as_ptr(),
            len: end - start,
            device: self.device(),
            mapped: element_address::<T>(self.mapped(), start),
            _borrow: PhantomData,
        }
    }

    /// The elements `range`, to pass to a `&mut [T]` kernel parameter. The guard stays
    /// mutably borrowed while the range lives.
    #[track_caller]
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> PresentSliceMut<'_, T> {
        // SAFETY: only the address and length are taken; `&mut self` keeps the range unique.
        let all = unsafe { self.device_view() };
        let (start, end) = bounds(range, all.len());
        PresentSliceMut {
            data: all[start..end].as_ptr().cast_mut(),
            len: end - start,
            device: self.device(),
            mapped: element_address::<T>(self.mapped(), start),
            _borrow: PhantomData,
        }
    }

    /// Copies the elements `range` back from the device now and lends them for reading; the
    /// rest of the slice is neither copied nor readable, and the data stays on the device.
    /// The copy follows the kernels queued on this guard's device, so it holds what the last
    /// launch wrote. One copy of `range`'s bytes alone: a halo exchange moves the halo rows,
    /// not the grid. A queued kernel that faulted ends the process here, as in
    /// [`sync`](PreloadMut::sync), which cannot return the error either.
    #[track_caller]
    pub fn sync_range(&mut self, range: impl RangeBounds<usize>) -> &[T] {
        let (ptr, len) = self.source_range(range);
        self.copy_bytes::<{ update_direction::FROM_DEVICE }>(ptr.cast(), len * size_of::<T>());
        // SAFETY: these elements were just copied from the device, and `&mut self` keeps any
        // kernel off the guard while the reference lives.
        unsafe { core::slice::from_raw_parts(ptr, len) }
    }

    /// Lends the host copy of the elements `range` for editing, then copies them to the device;
    /// the rest of the device data is left as the kernels wrote it. As with
    /// [`update`](PreloadMut::update), the host elements are whatever they were at their last
    /// copy to or from the device: [`sync_range`](Self::sync_range) first to edit the current
    /// values. The copy follows the kernels queued on this guard's device; on a GPU it is queued
    /// behind them on the library's stream and not waited for (the guard's next host access
    /// waits). A fault ends the process, as in `sync`.
    #[track_caller]
    pub fn update_range<R>(
        &mut self,
        range: impl RangeBounds<usize>,
        edit: impl FnOnce(&mut [T]) -> R,
    ) -> R {
        let (ptr, len) = self.source_range(range);
        self.host_settled();
        // SAFETY: the guard holds the source's `&mut` borrow, and `&mut self` makes this the
        // only access to it; no kernel reads host memory, and no copy in still does
        // (`host_settled`).
        let result = edit(unsafe { core::slice::from_raw_parts_mut(ptr, len) });
        self.copy_bytes::<{ update_direction::TO_DEVICE }>(ptr.cast(), len * size_of::<T>());
        result
    }

    /// The host address of the elements `range` of the source, and their count; panics like
    /// slice indexing when outside.
    #[track_caller]
    fn source_range(&self, range: impl RangeBounds<usize>) -> (*mut T, usize) {
        let (start, end) = bounds(range, self.source().len());
        (self.source().cast::<T>().wrapping_add(start), end - start)
    }
}

/// The accessors both range types share.
macro_rules! range_accessors {
    ($ty:ident) => {
        impl<T> $ty<'_, T> {
            pub(crate) fn as_ptr(&self) -> *const T {
                self.data
            }
            pub(crate) fn device(&self) -> i64 {
                self.device
            }
            pub(crate) fn mapped(&self) -> u64 {
                self.mapped
            }
            /// Elements in the range.
            pub fn len(&self) -> usize {
                self.len
            }
            /// Whether the range is empty.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }
        }
    };
}

range_accessors!(PresentSlice);
range_accessors!(PresentSliceMut);
