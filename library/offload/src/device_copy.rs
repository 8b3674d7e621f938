//! `DeviceCopy`: data that may be copied bitwise to a device and back.

/// Plain data: no references, no pointers to host memory, no drop glue, the same layout on the
/// host and on the device.
///
/// # Safety
/// Implement it only for types whose every bit pattern copied to another address space and back
/// is still a valid value: `#[repr(C)]` or `#[repr(transparent)]` aggregates of primitives. Use
/// `#[derive(offload::DeviceCopy)]`, which checks this field by field.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be copied bitwise to an offload device",
    label = "not plain device data",
    note = "only primitives, arrays and slices of them, and `#[derive(offload::DeviceCopy)]` \
            `#[repr(C)]` structs of them can be preloaded or passed to a kernel"
)]
pub unsafe trait DeviceCopy {}

macro_rules! impl_device_copy {
    ($($t:ty),* $(,)?) => { $(unsafe impl DeviceCopy for $t {})* };
}

impl_device_copy!(
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    bool,
    char,
    ()
);

unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}
unsafe impl<T: DeviceCopy> DeviceCopy for [T] {}
unsafe impl<T: DeviceCopy> DeviceCopy for core::num::Wrapping<T> {}
unsafe impl<T: ?Sized> DeviceCopy for core::marker::PhantomData<T> {}
