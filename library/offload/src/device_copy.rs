//! `DeviceCopy`: data that may be copied bitwise to a device and back.

/// Plain data: no references, no pointers to host memory, no drop glue, no padding, the same
/// layout on the host and on the device, and every bit pattern a valid value.
///
/// The last one is what keeps device copies safe: the host may see bytes a kernel wrote, or a
/// device copy left stale by a leaked (`mem::forget`) guard, and those must still be values.
/// So integers and floats qualify, `bool` and `char` do not (use `u8`/`u32`).
///
/// # Safety
/// Implement it only for types of which every bit pattern of their size is a valid value and
/// that have no padding: `#[repr(C)]` or `#[repr(transparent)]` aggregates of such types. Use
/// `#[derive(offload::DeviceCopy)]`, which checks this field by field. The padding of a generic
/// struct depends on its type arguments (`Pair<u8, u64>` has 7 bytes of it, `Pair<u32, f32>`
/// none), so the derive checks it in [`DeviceCopy::NO_PADDING`], which every use of the type
/// evaluates for the arguments it is used with.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be copied bitwise to an offload device",
    label = "not plain device data",
    note = "only integers, floats, arrays and slices of them, and `#[derive(offload::DeviceCopy)]` \
            `#[repr(C)]` structs of them can be preloaded or passed to a kernel"
)]
pub unsafe trait DeviceCopy {
    /// Evaluating it fails to compile when the type, with the type arguments it is used with,
    /// has padding or contains a type that has (the derive's check; `()` for the library's own
    /// impls). `preload`, `preload_mut`, `HostBuffer` and every kernel argument evaluate it
    /// for the type they are given, so a padded instantiation of a generic `DeviceCopy` struct
    /// is a compile error when the program is built (not by `cargo check`, which evaluates no
    /// constant of a generic function). Leave it to the derive: a manual impl keeps this
    /// default and vouches for the layout itself.
    const NO_PADDING: () = ();
}

macro_rules! impl_device_copy {
    ($($t:ty),* $(,)?) => { $(unsafe impl DeviceCopy for $t {})* };
}

impl_device_copy!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64, ());

// An aggregate of `T`s is padded where `T` is: each passes its element's check on.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {
    const NO_PADDING: () = T::NO_PADDING;
}
unsafe impl<T: DeviceCopy> DeviceCopy for [T] {
    const NO_PADDING: () = T::NO_PADDING;
}
unsafe impl<T: DeviceCopy> DeviceCopy for core::num::Wrapping<T> {
    const NO_PADDING: () = T::NO_PADDING;
}
unsafe impl<T: ?Sized> DeviceCopy for core::marker::PhantomData<T> {}
