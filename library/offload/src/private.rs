//! Support for the code `#[offload::kernel]` and `#[derive(DeviceCopy)]` generate. Not a public
//! API.

use core::ptr::NonNull;

#[cfg(not(offload_device))]
pub use crate::device::LaunchDevice;
pub use crate::device_copy::assert_no_padding;
pub use crate::geometry::Geometry;
#[cfg(not(offload_device))]
pub use crate::launch::launch;
#[cfg(not(offload_device))]
pub use crate::stream::{CudaImage, ModuleSource, Slot, cuda_module_source, pending_launches};

/// Panics, in the constant `#[offload::kernel]` writes beside each kernel, with `message` where
/// the kernel's module (`module_path`) is not within the kernels module the build names
/// (`kernels`, from `MODULE_ENV`; no check where the build names none): the device images are
/// built from the kernels module alone.
pub const fn in_kernels_module(module_path: &str, kernels: Option<&str>, message: &str) {
    let Some(kernels) = kernels else { return };
    let (path, name) = (module_path.as_bytes(), kernels.as_bytes());
    // Each segment after the crate's name.
    let mut start = match first_separator(path, 0) {
        Some(at) => at + 2,
        None => panic!("{}", message),
    };
    loop {
        let end = match first_separator(path, start) {
            Some(at) => at,
            None => path.len(),
        };
        if end - start == name.len() && same_bytes(path, start, name) {
            return;
        }
        if end == path.len() {
            panic!("{}", message);
        }
        start = end + 2;
    }
}

/// The first `::` of `path` at or after `from`.
const fn first_separator(path: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + 1 < path.len() {
        if path[i] == b':' && path[i + 1] == b':' {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Whether `path[at..]` starts with `name`.
const fn same_bytes(path: &[u8], at: usize, name: &[u8]) -> bool {
    let mut i = 0;
    while i < name.len() {
        if path[at + i] != name[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A kernel's host-side type, as `#[offload::kernel]` writes it.
pub trait Kernel {}

/// What `launch!` and `offload!` take as `kernel`: a function marked `#[offload::kernel]`,
/// whose host-side value is a function of no arguments returning the kernel's type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kernel",
    label = "not a function marked `#[offload::kernel]`",
    note = "launch!, launch_async! and offload! take a function marked #[offload::kernel] in \
            the kernels file (src/kernels.rs), which the device images are built from"
)]
pub trait KernelFn {
    type Kernel: Kernel;
    fn kernel(self) -> Self::Kernel;
}

#[diagnostic::do_not_recommend]
impl<F: FnOnce() -> K, K: Kernel> KernelFn for F {
    type Kernel = K;
    #[inline(always)]
    fn kernel(self) -> K {
        self()
    }
}

/// The kernel's type from the kernel as a value (`launch!`'s first argument).
#[inline(always)]
pub fn kernel<F: KernelFn>(kernel: F) -> F::Kernel {
    kernel.kernel()
}

/// The sum of `sizes`, in a constant: a struct's size when its fields' sizes are these and it
/// has no padding (`#[derive(DeviceCopy)]`'s check).
pub const fn total_size(sizes: &[usize]) -> usize {
    let (mut total, mut i) = (0, 0);
    while i < sizes.len() {
        total += sizes[i];
        i += 1;
    }
    total
}

// The declarations' names are literals (a `link_name` must be), checked against the contract.
const _: () =
    assert!(offload_abi::same(offload_abi::intrinsics::CUDA_IMAGE, "__rust_offload_cuda_image"));
const _: () = assert!(offload_abi::same(
    offload_abi::intrinsics::CUDA_IMAGE_LEN,
    "__rust_offload_cuda_image_len"
));
const _: () =
    assert!(offload_abi::same(offload_abi::intrinsics::CUDA_PTX, "__rust_offload_cuda_ptx"));

#[cfg(not(offload_device))]
unsafe extern "C" {
    /// The embedded cubin, defined by the offload lowering (null when the program has none).
    #[link_name = "__rust_offload_cuda_image"]
    static CUDA_IMAGE: *const u8;
    /// Its length in bytes (0 when the program has none).
    #[link_name = "__rust_offload_cuda_image_len"]
    static CUDA_IMAGE_LEN: i64;
    /// The PTX the cubin was assembled from, NUL-terminated, defined by the offload lowering
    /// (null when the program has none).
    #[link_name = "__rust_offload_cuda_ptx"]
    static CUDA_PTX: *const core::ffi::c_char;
}

/// The embedded cubin and its PTX, for the library's own CUDA module (`launch_async`,
/// `launch_sync`). Only code the launch macros generate calls it, so a program that launches
/// nothing never references the symbols.
#[cfg(not(offload_device))]
#[inline(always)]
pub fn cuda_image() -> CudaImage {
    // SAFETY: the lowering defines the three as constants of these types.
    unsafe { CudaImage { ptr: CUDA_IMAGE, len: CUDA_IMAGE_LEN, ptx: CUDA_PTX } }
}

// The entry points' names are their functions' (`no_mangle`); each is checked against the
// contract's constant.
const _: () =
    assert!(offload_abi::same(offload_abi::entry::LOAD_RUNTIME, "__offload_load_runtime"));
const _: () = assert!(offload_abi::same(
    offload_abi::entry::BEFORE_CUDA_REGISTER,
    "__offload_before_cuda_register"
));

/// The runtime's loader: a constructor the link stage emits calls it before every other, with
/// the names of the runtime functions the program calls and the table its calls go through
/// (see `rt::load_runtime`).
///
/// # Safety
/// `names` must point to `n` C strings and `table` to `table_bytes` writable bytes (at least `n`
/// pointers) that nothing else uses: the loader may make them read-only once they are filled.
#[cfg(not(offload_device))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __offload_load_runtime(
    names: *const *const core::ffi::c_char,
    table: *mut *const core::ffi::c_void,
    n: usize,
    table_bytes: usize,
) {
    // SAFETY: per the caller.
    unsafe { crate::rt::load_runtime(names, table, n, table_bytes) }
}

/// Whether the runtime's table was made read-only once filled (for tests).
#[cfg(not(offload_device))]
pub fn runtime_table_sealed() -> bool {
    crate::rt::runtime_table_sealed()
}

/// Called by the registration constructor the offload lowering emits, before a program that
/// embeds an NVIDIA image registers it, with that image: see `rt::before_cuda_register`.
///
/// # Safety
/// `image` must point to the `len` bytes of the embedded cubin.
#[cfg(not(offload_device))]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __offload_before_cuda_register(image: *const u8, len: i64) {
    // SAFETY: per the caller.
    unsafe { crate::rt::before_cuda_register(image, len) };
}

/// A by-value parameter from its 8-byte slot.
///
/// # Safety
/// `slot` must hold the bits of a `T` as `KernelArg<Val<T>>` wrote them.
#[inline(always)]
pub unsafe fn value<T: Copy>(slot: u64) -> T {
    // SAFETY: `T` fits in the slot (checked when the launch was compiled) and is plain data.
    unsafe { core::mem::transmute_copy::<u64, T>(&slot) }
}

/// The data behind a kernel's `&T`/`&mut T` parameter, rebuilt from its address slot: sized
/// data. Implemented for every sized type. The host launcher asks for it of each such parameter
/// (`sized_data`) and the device entry rebuilds the parameter through it, each at the
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

/// Asks for [`SizedData`] of `T` in the host build, which has no device entry.
#[inline(always)]
pub const fn sized_data<T: ?Sized + SizedData>() {}

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
/// As [`slice`]; the data is shared by the kernel's threads, as in CUDA.
#[inline(always)]
pub unsafe fn slice_mut<'a, T>(address: *mut u8, len: u64) -> &'a mut [T] {
    // SAFETY: as in `slice`.
    unsafe { core::slice::from_raw_parts_mut(elements::<T>(address, len).as_ptr(), len as usize) }
}

/// A `Region` parameter from its address and length slots.
///
/// # Safety
/// As [`slice_mut`], and the launch's geometry passed the strategy's `check_launch`.
#[inline(always)]
pub unsafe fn region<'a, T, S: crate::PartitioningStrategy>(
    address: *mut u8,
    len: u64,
) -> crate::Region<'a, T, S> {
    // SAFETY: per the caller, and `elements`.
    unsafe { crate::Region::from_raw_parts(elements::<T>(address, len), len as usize) }
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

#[cfg(not(target_arch = "nvptx64"))]
pub use crate::host_offload::run_grid;

#[cfg(test)]
mod tests {
    use super::in_kernels_module;

    #[test]
    fn kernels_are_found_within_the_kernels_module_only() {
        let inside = |path| {
            std::panic::catch_unwind(|| in_kernels_module(path, Some("kernels"), "x")).is_ok()
        };
        assert!(inside("demo::kernels"));
        assert!(inside("demo::kernels::tensor"));
        assert!(inside("demo::gpu::kernels"));
        assert!(!inside("demo"));
        assert!(!inside("demo::kernels_extra"));
        assert!(!inside("demo::other::kernel"));
        // No module named by the build: no check.
        in_kernels_module("demo", None, "x");
    }
}
