//! A kernel's parameters rebuilt in a device image from their 8-byte slots, as the entry points
//! `#[offload::kernel]` writes take them: [`Param`].

use core::ptr::NonNull;

/// How an entry point rebuilds each parameter of its kernel from the parameter's slots (an
/// address or a value, then a length for slices and regions); and, in the host build, which has
/// no entry point, the check that a `&T`/`&mut T` parameter is sized data ([`Param::sized`]).
pub struct Param;

impl Param {
    /// A by-value parameter from its 8-byte slot.
    ///
    /// # Safety
    /// `slot` must hold the bits of a `T` as `KernelArg<Val<T>>` wrote them.
    #[inline(always)]
    pub unsafe fn value<T: Copy>(slot: u64) -> T {
        // SAFETY: `T` fits in the slot (checked when the launch was compiled) and is plain data.
        unsafe { core::mem::transmute_copy::<u64, T>(&slot) }
    }

    /// A `&T` parameter from its address slot: at the parameter's type, so that unsized data is
    /// refused there ([`SizedData`]).
    ///
    /// # Safety
    /// `address` must be the device address of a mapped, initialised `T`.
    #[inline(always)]
    pub unsafe fn reference<'a, T: ?Sized + SizedData>(address: *mut u8) -> &'a T {
        // SAFETY: per the caller.
        unsafe { T::reference(address) }
    }

    /// A `&mut T` parameter from its address slot.
    ///
    /// # Safety
    /// As [`Param::reference`]; the data is shared by the kernel's threads, as in CUDA.
    #[inline(always)]
    pub unsafe fn reference_mut<'a, T: ?Sized + SizedData>(address: *mut u8) -> &'a mut T {
        // SAFETY: per the caller.
        unsafe { T::reference_mut(address) }
    }

    /// A `&[T]` parameter from its address and length slots.
    ///
    /// # Safety
    /// `address` must be the device address of `len` initialised elements (or anything for 0).
    #[inline(always)]
    pub unsafe fn slice<'a, T>(address: *mut u8, len: u64) -> &'a [T] {
        // SAFETY: per the caller, and `elements`.
        unsafe { core::slice::from_raw_parts(elements::<T>(address, len).as_ptr(), len as usize) }
    }

    /// A `&mut [T]` parameter from its address and length slots.
    ///
    /// # Safety
    /// As [`Param::slice`]; the data is shared by the kernel's threads, as in CUDA.
    #[inline(always)]
    pub unsafe fn slice_mut<'a, T>(address: *mut u8, len: u64) -> &'a mut [T] {
        // SAFETY: as in `slice`.
        unsafe {
            core::slice::from_raw_parts_mut(elements::<T>(address, len).as_ptr(), len as usize)
        }
    }

    /// A `Region` parameter from its address and length slots.
    ///
    /// # Safety
    /// As [`Param::slice_mut`], and the launch's geometry passed the strategy's `check_launch`.
    #[inline(always)]
    pub unsafe fn region<'a, T, S: crate::PartitioningStrategy>(
        address: *mut u8,
        len: u64,
    ) -> crate::Region<'a, T, S> {
        // SAFETY: per the caller, and `elements`.
        unsafe { crate::Region::from_raw_parts(elements::<T>(address, len), len as usize) }
    }

    /// Asks for [`SizedData`] of `T` in the host build, which has no entry point.
    #[inline(always)]
    pub const fn sized<T: ?Sized + SizedData>() {}
}

/// The data behind a kernel's `&T`/`&mut T` parameter, rebuilt from its address slot: sized
/// data. Implemented for every sized type. The host launcher asks for it of each such parameter
/// ([`Param::sized`]) and the device entry rebuilds the parameter through it, each at the
/// parameter's type, so that unsized data is refused there with this message rather than deep
/// inside a device image's build.
#[diagnostic::on_unimplemented(
    message = "a kernel's `&T` or `&mut T` parameter must be sized data, or a slice written out as `&[T]`: here `T` is `{Self}`",
    label = "`{Self}` is unsized here",
    note = "a slice parameter gets a length slot only where its type is written `&[T]` or `&mut [T]` in the kernel's signature: write the slice type out instead of a type alias; other unsized data (`str`, `dyn Trait`) cannot go to the device"
)]
pub trait SizedData {
    /// A `&T` parameter from its address slot.
    ///
    /// # Safety
    /// `address` must be the device address of a mapped, initialised `T`.
    unsafe fn reference<'a>(address: *mut u8) -> &'a Self;

    /// A `&mut T` parameter from its address slot.
    ///
    /// # Safety
    /// As [`SizedData::reference`]; the data is shared by the kernel's threads, as in CUDA.
    unsafe fn reference_mut<'a>(address: *mut u8) -> &'a mut Self;
}

impl<T> SizedData for T {
    #[inline(always)]
    unsafe fn reference<'a>(address: *mut u8) -> &'a T {
        unsafe { &*data_address::<T>(address) }
    }

    #[inline(always)]
    unsafe fn reference_mut<'a>(address: *mut u8) -> &'a mut T {
        unsafe { &mut *data_address::<T>(address) }
    }
}

/// Zero-sized data is not mapped (its address slot may be null): any aligned address is it.
#[inline(always)]
fn data_address<T>(address: *mut u8) -> *mut T {
    if size_of::<T>() == 0 { NonNull::<T>::dangling().as_ptr() } else { address.cast::<T>() }
}

/// The first element of a slice parameter: its address slot, or, for an empty slice or
/// zero-sized elements (which are not mapped, so the slot may be null), a dangling, aligned
/// address.
///
/// One select of non-null addresses, rather than an early return of `&[]`: the compiler then
/// knows that whatever `get(i)` finds (`i < len`, so `len > 0`) is the slot's address and not
/// null, and a kernel's bounds checks are its only branch. With the early return, every
/// `get` also compared the address against null on nvptx (0.4% of a saxpy's time on an H200).
///
/// # Safety
/// `address` must not be null when `len > 0` and `T` is not zero-sized: the runtime maps data
/// to non-null device addresses.
#[inline(always)]
unsafe fn elements<T>(address: *mut u8, len: u64) -> NonNull<T> {
    if len == 0 || size_of::<T>() == 0 {
        NonNull::dangling()
    } else {
        // SAFETY: per the caller.
        unsafe { NonNull::new_unchecked(address.cast::<T>()) }
    }
}
