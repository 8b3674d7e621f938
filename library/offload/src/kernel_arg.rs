//! Kernel arguments: how each argument of `launch!` reaches its parameter.
//!
//! Every kernel parameter occupies 8-byte slots in the runtime's argument arrays: a scalar one
//! slot holding its bits, a `&T`/`&mut T` one slot holding the address, a slice two slots
//! (address, then length). The argument's type decides how the address slot is mapped.

use crate::intrinsics::arg_kind;
use crate::region::{PartitioningStrategy, Region};
use crate::view::{PresentSlice, PresentSliceMut};
use crate::{DeviceCopy, Preload, PreloadMut};
/// Parameter shapes, written by `#[offload::kernel]` in the bounds of a kernel's launcher.
pub mod param {
    use core::marker::PhantomData;

    /// A parameter taken by value (`a: f32`).
    pub struct Val<T>(PhantomData<T>);
    /// A parameter taken by shared reference (`x: &[f32]`).
    pub struct Ref<T: ?Sized>(PhantomData<*const T>);
    /// A parameter taken by mutable reference (`y: &mut [f32]`).
    pub struct Mut<T: ?Sized>(PhantomData<*mut T>);
    /// A [`Region`](crate::Region) parameter (`r: Region<'_, f32, Linear1D>`): a `&mut [T]`
    /// that strategy `S` partitions among the threads.
    pub struct Part<T, S>(PhantomData<(*mut T, S)>);
}

/// A value that can be passed to a kernel parameter of shape `P` (see [`param`]).
///
/// # Safety
/// `KIND` must describe `address()` truthfully: `PRESENT` only for data a live guard keeps
/// mapped, the map kinds only for borrows that last the whole launch. `mapped()`, where not 0,
/// must be that data's device address on `device()` for as long as the argument lives.
/// `NO_PADDING` must fail to evaluate where the data has padding (the data's
/// [`DeviceCopy::NO_PADDING`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a kernel parameter of this type",
    note = "pass `&Preload`/`&PreloadMut`/`&T` to `&T` parameters, `&mut PreloadMut`/`&mut T` to \
            `&mut T` parameters, and plain device data by value to value parameters; a raw \
            pointer (`&mut x as *mut _`) is not accepted: pass the reference itself (`&mut x`), \
            which the launch maps to the device and back"
)]
pub unsafe trait KernelArg<P> {
    /// How the address slot is mapped (an `intrinsics::arg_kind` constant).
    const KIND: i64;
    /// The data's [`DeviceCopy::NO_PADDING`]: every launcher `#[offload::kernel]` writes
    /// evaluates it for each argument, so that a padded instantiation of a generic
    /// `DeviceCopy` struct cannot be passed to a kernel (its padding would be copied
    /// uninitialised, to the device or into a by-value slot).
    const NO_PADDING: ();
    /// The slot's value: the host address of the data, or a scalar's bits.
    fn address(&self) -> *const u8;
    /// Bytes the address slot maps (the scalar's size for a value).
    fn size(&self) -> i64;
    /// Elements, for slice parameters (the second slot).
    fn elements(&self) -> usize;
    /// The device the data is present on (a runtime device number, -1 for the default), or
    /// `i64::MIN` for data mapped by the launch itself and for values.
    #[inline(always)]
    fn device(&self) -> i64 {
        ANY_DEVICE
    }
    /// For `PRESENT` data: its device address on [`device`](Self::device), where the argument
    /// knows it (a guard asks the runtime once, when it maps the data); 0 where it does not,
    /// and the launch then asks.
    #[inline(always)]
    fn mapped(&self) -> u64 {
        0
    }
}

/// A [`KernelArg`] that an asynchronous launch (`launch_async!`) accepts: data already present
/// on the device, or a scalar. Such a kernel touches device memory only, and only memory that a
/// guard keeps mapped until it synchronises, so it may run after the launch returns.
///
/// # Safety
/// Implement it only where `KernelArg::KIND` is `PRESENT` or `LITERAL`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to an asynchronous launch",
    label = "not present on the device",
    note = "`launch_async!` takes preloaded data (`&Preload`, `&PreloadMut`, `&mut PreloadMut`, \
            their ranges) and scalars: a plain `&T`/`&mut T` is mapped around one launch only, \
            so preload it first (or use `launch!`)"
)]
pub unsafe trait PresentArg<P>: KernelArg<P> {}

// SAFETY (of the impls below): each is a `PRESENT` or `LITERAL` `KernelArg` impl above.
unsafe impl<'r, 'a, T: ?Sized + DeviceCopy + Elements> PresentArg<param::Ref<T>>
    for &'r Preload<'a, T>
{
}
unsafe impl<'r, 'a, T: ?Sized + DeviceCopy + Elements> PresentArg<param::Ref<T>>
    for &'r PreloadMut<'a, T>
{
}
unsafe impl<'r, 'a, T: ?Sized + DeviceCopy + Elements> PresentArg<param::Ref<T>>
    for &'r mut PreloadMut<'a, T>
{
}
unsafe impl<'r, 'a, T: ?Sized + DeviceCopy + Elements> PresentArg<param::Mut<T>>
    for &'r mut PreloadMut<'a, T>
{
}
unsafe impl<'r, 'a, T: DeviceCopy> PresentArg<param::Ref<[T]>> for &'r PresentSlice<'a, T> {}
unsafe impl<'r, 'a, T: DeviceCopy> PresentArg<param::Ref<[T]>> for &'r PresentSliceMut<'a, T> {}
unsafe impl<'r, 'a, T: DeviceCopy> PresentArg<param::Mut<[T]>> for &'r mut PresentSliceMut<'a, T> {}
unsafe impl<T: DeviceCopy + Copy> PresentArg<param::Val<T>> for T {}
#[diagnostic::do_not_recommend]
unsafe impl PresentArg<param::Val<bool>> for bool {}

/// [`KernelArg::device`] of arguments that go to whichever device the launch runs on.
pub(crate) const ANY_DEVICE: i64 = i64::MIN;

/// `size_of_val` as the runtime's `i64`.
fn bytes<T: ?Sized>(data: &T) -> i64 {
    size_of_val(data) as i64
}

/// Elements of a slice, or 1 for a sized value.
pub trait Elements {
    fn elements(&self) -> usize;
}
impl<T> Elements for [T] {
    fn elements(&self) -> usize {
        self.len()
    }
}
impl<T> Elements for T {
    fn elements(&self) -> usize {
        1
    }
}

macro_rules! impl_kernel_arg {
    ($param:ident, $kind:expr, [$($lt:lifetime),*] $ty:ty, |$s:ident| $data:expr $(, device $dev:expr, mapped $mapped:expr)?) => {
        unsafe impl<$($lt,)* T: ?Sized + DeviceCopy + Elements> KernelArg<param::$param<T>> for $ty {
            const KIND: i64 = $kind;
            const NO_PADDING: () = T::NO_PADDING;
            #[inline(always)]
            fn address(&self) -> *const u8 {
                let $s = self;
                ($data) as *const T as *const u8
            }
            #[inline(always)]
            fn size(&self) -> i64 {
                let $s = self;
                bytes::<T>($data)
            }
            #[inline(always)]
            fn elements(&self) -> usize {
                let $s = self;
                Elements::elements($data)
            }
            $(
                #[inline(always)]
                fn device(&self) -> i64 {
                    let $s = self;
                    $dev
                }
                #[inline(always)]
                fn mapped(&self) -> u64 {
                    let $s = self;
                    $mapped
                }
            )?
        }
    };
}

// `&T` parameters.
impl_kernel_arg!(Ref, arg_kind::MAP_TO, ['r] &'r T, |s| &**s);
impl_kernel_arg!(Ref, arg_kind::MAP_TO, ['r] &'r mut T, |s| &**s);
impl_kernel_arg!(Ref, arg_kind::PRESENT, ['r, 'a] &'r Preload<'a, T>, |s| s.host(), device Preload::device(*s), mapped Preload::mapped(*s));
impl_kernel_arg!(Ref, arg_kind::PRESENT, ['r, 'a] &'r PreloadMut<'a, T>, |s| unsafe { s.device_view() }, device PreloadMut::device(*s), mapped PreloadMut::mapped(*s));
impl_kernel_arg!(Ref, arg_kind::PRESENT, ['r, 'a] &'r mut PreloadMut<'a, T>, |s| unsafe { s.device_view() }, device PreloadMut::device(&**s), mapped PreloadMut::mapped(&**s));
// `&mut T` parameters.
impl_kernel_arg!(Mut, arg_kind::MAP_TO_FROM, ['r] &'r mut T, |s| &**s);
impl_kernel_arg!(Mut, arg_kind::PRESENT, ['r, 'a] &'r mut PreloadMut<'a, T>, |s| unsafe { s.device_view() }, device PreloadMut::device(&**s), mapped PreloadMut::mapped(&**s));

/// Ranges of preloaded slices: present, no copies.
macro_rules! impl_present_range {
    ($param:ident, $ty:ty) => {
        unsafe impl<'r, 'a, T: DeviceCopy> KernelArg<param::$param<[T]>> for $ty {
            const KIND: i64 = arg_kind::PRESENT;
            const NO_PADDING: () = T::NO_PADDING;
            #[inline(always)]
            fn address(&self) -> *const u8 {
                self.as_ptr().cast()
            }
            #[inline(always)]
            fn size(&self) -> i64 {
                (self.len() * size_of::<T>()) as i64
            }
            #[inline(always)]
            fn elements(&self) -> usize {
                self.len()
            }
            #[inline(always)]
            fn device(&self) -> i64 {
                (**self).device()
            }
            #[inline(always)]
            fn mapped(&self) -> u64 {
                (**self).mapped()
            }
        }
    };
}

impl_present_range!(Ref, &'r PresentSlice<'a, T>);
impl_present_range!(Ref, &'r PresentSliceMut<'a, T>);
impl_present_range!(Mut, &'r mut PresentSliceMut<'a, T>);

/// `Region` parameters: a region, mapped in and back around the launch as a `&mut [T]`, or
/// preloaded data (a guard or a range of it), present.
unsafe impl<'a, T: DeviceCopy, S: PartitioningStrategy> KernelArg<param::Part<T, S>>
    for Region<'a, T, S>
{
    const KIND: i64 = arg_kind::MAP_TO_FROM;
    const NO_PADDING: () = T::NO_PADDING;
    #[inline(always)]
    fn address(&self) -> *const u8 {
        self.as_ptr().cast()
    }
    #[inline(always)]
    fn size(&self) -> i64 {
        (self.len() * size_of::<T>()) as i64
    }
    #[inline(always)]
    fn elements(&self) -> usize {
        self.len()
    }
}

/// Preloaded data goes to a `Region` parameter as it goes to a `&mut [T]` one: present, with
/// that parameter's slots.
macro_rules! impl_present_region {
    ($ty:ty) => {
        unsafe impl<'r, 'a, T: DeviceCopy, S: PartitioningStrategy> KernelArg<param::Part<T, S>>
            for $ty
        {
            const KIND: i64 = <Self as KernelArg<param::Mut<[T]>>>::KIND;
            const NO_PADDING: () = T::NO_PADDING;
            #[inline(always)]
            fn address(&self) -> *const u8 {
                KernelArg::<param::Mut<[T]>>::address(self)
            }
            #[inline(always)]
            fn size(&self) -> i64 {
                KernelArg::<param::Mut<[T]>>::size(self)
            }
            #[inline(always)]
            fn elements(&self) -> usize {
                KernelArg::<param::Mut<[T]>>::elements(self)
            }
            #[inline(always)]
            fn device(&self) -> i64 {
                KernelArg::<param::Mut<[T]>>::device(self)
            }
            #[inline(always)]
            fn mapped(&self) -> u64 {
                KernelArg::<param::Mut<[T]>>::mapped(self)
            }
        }
        // SAFETY: `PRESENT`, as the `&mut [T]` parameter's impl it forwards to.
        unsafe impl<'r, 'a, T: DeviceCopy, S: PartitioningStrategy> PresentArg<param::Part<T, S>>
            for $ty
        {
        }
    };
}

impl_present_region!(&'r mut PreloadMut<'a, [T]>);
impl_present_region!(&'r mut PresentSliceMut<'a, T>);

/// By-value parameters: the value's bits in the slot.
unsafe impl<T: DeviceCopy + Copy> KernelArg<param::Val<T>> for T {
    const KIND: i64 = arg_kind::LITERAL;
    const NO_PADDING: () = T::NO_PADDING;
    #[inline(always)]
    fn address(&self) -> *const u8 {
        const {
            assert!(
                size_of::<T>() <= 8,
                "a kernel parameter taken by value must fit in 8 bytes: take it by reference"
            )
        };
        let mut slot = 0u64;
        // SAFETY: at most 8 bytes of plain data copied into an 8-byte slot.
        unsafe {
            core::ptr::copy_nonoverlapping(
                self as *const T as *const u8,
                &mut slot as *mut u64 as *mut u8,
                size_of::<T>(),
            )
        };
        // The slot travels in a pointer-typed array; it is never dereferenced.
        core::ptr::without_provenance(slot as usize)
    }
    #[inline(always)]
    fn size(&self) -> i64 {
        size_of::<u64>() as i64
    }
    #[inline(always)]
    fn elements(&self) -> usize {
        1
    }
}

/// A `bool` by value: the slot holds 0 or 1. `bool` is not [`DeviceCopy`] (a copy back could
/// hand the host a byte that is not a `bool`), but a value parameter only goes to the device,
/// from a valid host `bool`, and the kernel reads the slot's first byte: always 0 or 1. (Left
/// out of the lists of implementations in errors, where it would only be noise.)
#[diagnostic::do_not_recommend]
unsafe impl KernelArg<param::Val<bool>> for bool {
    const KIND: i64 = arg_kind::LITERAL;
    const NO_PADDING: () = ();
    #[inline(always)]
    fn address(&self) -> *const u8 {
        // The slot's first byte (both images are little-endian) is the `bool`'s, as
        // `__private::value::<bool>` reads it; the others are 0.
        core::ptr::without_provenance(usize::from(*self))
    }
    #[inline(always)]
    fn size(&self) -> i64 {
        size_of::<u64>() as i64
    }
    #[inline(always)]
    fn elements(&self) -> usize {
        1
    }
}
