//! Explicit data transfers for Rust GPU offload: the stand-in for `core::offload`.
//!
//! ```text
//! use offload::{preload, preload_mut};
//!
//! #[offload::kernel]
//! pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     let i = offload::gpu::global_id_x();
//!     if i < y.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! let x = preload(&xs[..]); // host -> device once
//! let mut y = preload_mut(&mut ys[..]); // host -> device once
//! for _ in 0..100 {
//!     offload::launch!(saxpy, 4096, 256, (2.0f32, &x, &mut y))?; // no copies
//! }
//! drop(y); // device -> host once
//! ```
//!
//! Layers, as in cudarc: [`sys`] declares the runtime, `rt` wraps it with checks, and the
//! safe types ([`Preload`], [`PreloadMut`], `launch!`) are built on those and on the marker
//! functions of [`intrinsics`] that the offload lowering turns into `__tgt_*` calls.

#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx))]
// `offload::gpu::math` on nvptx: the float intrinsics core has, and the PTX `.approx` ones.
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![cfg_attr(target_arch = "nvptx64", feature(core_intrinsics, link_llvm_intrinsics))]
// `offload::gpu::atomic`'s float additions: PTX's `atom.add.f32`/`.f64`.
#![cfg_attr(target_arch = "nvptx64", feature(asm_experimental_arch))]
// `offload::gpu::shared`'s window, which the device stage defines: a call that reads nothing.
#![cfg_attr(target_arch = "nvptx64", feature(ffi_const))]

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
pub mod arch;
#[cfg(not(offload_device))]
mod cuda;
#[cfg(not(offload_device))]
mod device;
mod device_copy;
mod device_param;
#[cfg(not(offload_device))]
mod entry;
mod error;
#[cfg(not(offload_device))]
mod event;
mod float16;
mod geometry;
pub mod gpu;
#[cfg(not(offload_device))]
mod host_buffer;
#[cfg(not(target_arch = "nvptx64"))]
mod host_offload;
#[cfg(not(offload_device))]
mod interop;
pub mod intrinsics;
#[cfg(not(offload_device))]
mod kernel_arg;
#[cfg(not(offload_device))]
mod launch;
#[cfg(not(offload_device))]
mod memory;
#[cfg(not(offload_device))]
mod preload;
#[cfg(not(offload_device))]
mod ranges;
pub mod region;
#[cfg(not(offload_device))]
mod rt;
#[cfg(not(offload_device))]
mod stream;
#[cfg(not(offload_device))]
pub mod sys;
#[cfg(not(offload_device))]
mod upstream;
#[cfg(not(offload_device))]
mod view;

#[cfg(not(offload_device))]
pub use device::{Device, DeviceMemory, LaunchDevice, device_name};
pub use device_copy::DeviceCopy;
pub use error::Error;
#[cfg(not(offload_device))]
pub use event::Event;
pub use float16::{bf16, f16};
#[cfg(not(offload_device))]
pub use host_buffer::HostBuffer;
#[cfg(not(offload_device))]
pub use interop::{AsDevicePtr, AsDevicePtrMut, CudaStream, DevicePtr, DevicePtrMut};
#[cfg(not(offload_device))]
pub use kernel_arg::{Elements, KernelArg, PresentArg, param};
#[cfg(not(offload_device))]
pub use launch::{Dim, Launch, SharedBytes};
/// `#[offload::kernel]` by upstream's name (`core::offload::offload_kernel`).
pub use offload_macros::kernel as offload_kernel;
pub use offload_macros::{DeviceCopy, kernel};
#[cfg(not(offload_device))]
pub use preload::{
    Preload, PreloadMut, preload, preload_mut, reclaim, try_preload, try_preload_mut,
};
pub use region::{LaunchError, PartitioningStrategy, RawRegion, Region};
#[cfg(not(offload_device))]
pub use stream::synchronize;
#[cfg(not(offload_device))]
pub use view::{PresentSlice, PresentSliceMut};

/// Launches a kernel: `launch!(KERNEL, GRID, BLOCK, (ARGS,))`, upstream's argument order.
///
/// `GRID` (blocks) and `BLOCK` (threads per block) are a `u32` (along x), `[u32; 2]`, `[u32; 3]`
/// or the same as tuples (along x, y and z). Each argument is a
/// scalar (passed by value), a `&Preload`/`&PreloadMut`/`&mut PreloadMut` (already on the
/// device: no copies), or a plain `&T`/`&mut T` (copied in, and back for `&mut`, around this
/// launch only). Returns `Result<(), offload::Error>` once the kernel has finished.
///
/// `launch!(KERNEL, GRID, BLOCK, shared = BYTES, (ARGS,))` gives each block `BYTES` of shared
/// memory (any integer type: [`SharedBytes`]), which its threads reach through [`gpu::shared`]
/// (at most 227 KiB, on sm_90).
///
/// `launch!(on DEVICE, KERNEL, GRID, BLOCK, (ARGS,))` launches on a [`Device`]; its
/// present arguments must have been preloaded on that device (else `Error::WrongDevice`).
#[macro_export]
macro_rules! launch {
    (on $device:expr, $kernel:path, $grid:expr, $block:expr, shared = $shared:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__private::kernel($kernel).__offload_launch($crate::Device::runtime_id(&$device), $grid, $block, $shared, ($($arg,)*))
    };
    (on $device:expr, $kernel:path, $grid:expr, $block:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__private::kernel($kernel).__offload_launch($crate::Device::runtime_id(&$device), $grid, $block, 0, ($($arg,)*))
    };
    ($kernel:path, $grid:expr, $block:expr, shared = $shared:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__private::kernel($kernel).__offload_launch(-1, $grid, $block, $shared, ($($arg,)*))
    };
    ($kernel:path, $grid:expr, $block:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__private::kernel($kernel).__offload_launch(-1, $grid, $block, 0, ($($arg,)*))
    };
}

/// Launches a kernel with upstream's fields (`core::offload::offload!`), in any order:
///
/// ```text
/// offload!(kernel = kernels::axpy::<f32>, workgroup_dim = [4096, 1, 1],
///          thread_dim = [256, 1, 1], dyn_cache = 0, device = 0, args = (2.0f32, &x, &mut y))
/// ```
///
/// `kernel` and `args` (a tuple literal) are required; `workgroup_dim` (blocks) and
/// `thread_dim` (threads per block) default to `[1, 1, 1]`, `dyn_cache` (shared memory bytes)
/// to 0, `device` to the default device (an index, `u32`, or a [`Device`]). A field given
/// twice, a missing one or an unknown one is a compile error. The launch is [`launch!`]'s, the
/// same function with the same arguments and checks: present guards, plain `&T`/`&mut T` mapped
/// around it, scalars by value; it returns `Result<(), offload::Error>`.
#[macro_export]
macro_rules! offload {
    ($($fields:tt)*) => {
        $crate::__offload_fields!([] [] [] [] [] [] $($fields)*)
    };
}

/// `offload!`'s fields, one at a time, into `[kernel] [args] [workgroup_dim] [thread_dim]
/// [dyn_cache] [device]`.
#[doc(hidden)]
#[macro_export]
macro_rules! __offload_fields {
    ([] $a:tt $w:tt $t:tt $c:tt $d:tt kernel = $kernel:path $(, $($rest:tt)*)?) => {
        $crate::__offload_fields!([$kernel] $a $w $t $c $d $($($rest)*)?)
    };
    ([$($k:tt)+] $a:tt $w:tt $t:tt $c:tt $d:tt kernel = $($rest:tt)*) => {
        ::core::compile_error!("duplicate field `kernel`")
    };
    ($k:tt [] $w:tt $t:tt $c:tt $d:tt args = ($($arg:expr),* $(,)?) $(, $($rest:tt)*)?) => {
        $crate::__offload_fields!($k [($($arg),*)] $w $t $c $d $($($rest)*)?)
    };
    ($k:tt [$($x:tt)+] $w:tt $t:tt $c:tt $d:tt args = $($rest:tt)*) => {
        ::core::compile_error!("duplicate field `args`")
    };
    ($k:tt [] $w:tt $t:tt $c:tt $d:tt args = $($rest:tt)*) => {
        ::core::compile_error!("`args` must be a tuple literal: `args = (a, &x, &mut y)`")
    };
    ($k:tt $a:tt [] $t:tt $c:tt $d:tt workgroup_dim = $v:expr $(, $($rest:tt)*)?) => {
        $crate::__offload_fields!($k $a [$v] $t $c $d $($($rest)*)?)
    };
    ($k:tt $a:tt [$($x:tt)+] $t:tt $c:tt $d:tt workgroup_dim = $($rest:tt)*) => {
        ::core::compile_error!("duplicate field `workgroup_dim`")
    };
    ($k:tt $a:tt $w:tt [] $c:tt $d:tt thread_dim = $v:expr $(, $($rest:tt)*)?) => {
        $crate::__offload_fields!($k $a $w [$v] $c $d $($($rest)*)?)
    };
    ($k:tt $a:tt $w:tt [$($x:tt)+] $c:tt $d:tt thread_dim = $($rest:tt)*) => {
        ::core::compile_error!("duplicate field `thread_dim`")
    };
    ($k:tt $a:tt $w:tt $t:tt [] $d:tt dyn_cache = $v:expr $(, $($rest:tt)*)?) => {
        $crate::__offload_fields!($k $a $w $t [$v] $d $($($rest)*)?)
    };
    ($k:tt $a:tt $w:tt $t:tt [$($x:tt)+] $d:tt dyn_cache = $($rest:tt)*) => {
        ::core::compile_error!("duplicate field `dyn_cache`")
    };
    ($k:tt $a:tt $w:tt $t:tt $c:tt [] device = - $v:literal $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "`device` must be non-negative, not -", ::core::stringify!($v),
            ": devices are numbered from 0 (leave `device` out for the default device)"
        ))
    };
    ($k:tt $a:tt $w:tt $t:tt $c:tt [] device = $v:expr $(, $($rest:tt)*)?) => {
        $crate::__offload_fields!($k $a $w $t $c [$v] $($($rest)*)?)
    };
    ($k:tt $a:tt $w:tt $t:tt $c:tt [$($x:tt)+] device = $($rest:tt)*) => {
        ::core::compile_error!("duplicate field `device`")
    };
    ($k:tt $a:tt $w:tt $t:tt $c:tt $d:tt $field:ident = $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "unknown field `", ::core::stringify!($field),
            "` (offload! takes kernel, args, workgroup_dim, thread_dim, dyn_cache, device)"
        ))
    };
    ([] $a:tt $w:tt $t:tt $c:tt $d:tt) => {
        ::core::compile_error!("missing `kernel`")
    };
    ($k:tt [] $w:tt $t:tt $c:tt $d:tt) => {
        ::core::compile_error!("missing `args`")
    };
    ([$kernel:path] [($($arg:expr),*)] [$($w:expr)?] [$($t:expr)?] [$($c:expr)?] [$($d:expr)?]) => {
        match $crate::__offload_or!(
            [$($crate::LaunchDevice::runtime_id(&$d))?]
            ::core::result::Result::<i64, $crate::Error>::Ok(-1)
        ) {
            ::core::result::Result::Ok(device) => $crate::__private::kernel($kernel).__offload_launch(
                device,
                $crate::__offload_or!([$($w)?] [1u32, 1, 1]),
                $crate::__offload_or!([$($t)?] [1u32, 1, 1]),
                $crate::__offload_or!([$($c)?] 0u32),
                ($($arg,)*)
            ),
            ::core::result::Result::Err(e) => ::core::result::Result::Err(e),
        }
    };
}

/// The value given, or the default.
#[doc(hidden)]
#[macro_export]
macro_rules! __offload_or {
    ([$value:expr] $default:expr) => {
        $value
    };
    ([] $default:expr) => {
        $default
    };
}

/// Enqueues a kernel and returns at once: `launch_async!(KERNEL, GRID, BLOCK, (ARGS,))`, the
/// arguments of [`launch!`], and `launch_async!(on DEVICE, ...)`.
///
/// On a CUDA GPU the kernel goes to a stream the library owns (one per GPU) and runs after the
/// kernels enqueued before it; on the host-offload plugin the launch runs synchronously. Only
/// present data (`&Preload`, `&PreloadMut`, `&mut PreloadMut`, their ranges) and scalars are
/// accepted ([`PresentArg`]): a plain `&T`/`&mut T` is mapped around one launch and does not
/// compile here. Nothing needs waiting for by hand: dropping a guard, `sync`, `update`, a
/// preload or a [`launch!`] first waits for the device's queued kernels; [`synchronize`] waits
/// explicitly. The views of a live guard (`Preload::slice`) make no runtime call and do not
/// wait. Returns
/// `Result<(), offload::Error>` once the kernel is enqueued (a kernel that faults is reported
/// by the next call that waits).
#[macro_export]
macro_rules! launch_async {
    (on $device:expr, $kernel:path, $grid:expr, $block:expr, shared = $shared:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__private::kernel($kernel).__offload_launch_async($crate::Device::runtime_id(&$device), $grid, $block, $shared, ($($arg,)*))
    };
    (on $device:expr, $kernel:path, $grid:expr, $block:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__private::kernel($kernel).__offload_launch_async($crate::Device::runtime_id(&$device), $grid, $block, 0, ($($arg,)*))
    };
    ($kernel:path, $grid:expr, $block:expr, shared = $shared:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__private::kernel($kernel).__offload_launch_async(-1, $grid, $block, $shared, ($($arg,)*))
    };
    ($kernel:path, $grid:expr, $block:expr, ($($arg:expr),* $(,)?)) => {
        $crate::__private::kernel($kernel).__offload_launch_async(-1, $grid, $block, 0, ($($arg,)*))
    };
}
