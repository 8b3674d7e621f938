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
#[cfg(not(offload_device))]
mod copies;
#[cfg(not(offload_device))]
mod cuda;
#[cfg(not(offload_device))]
mod device;
mod device_copy;
mod error;
#[cfg(not(offload_device))]
mod event;
mod geometry;
pub mod gpu;
#[cfg(not(offload_device))]
mod host_buffer;
#[cfg(not(target_arch = "nvptx64"))]
mod host_stack;
pub mod intrinsics;
#[cfg(not(offload_device))]
mod launch;
#[cfg(not(offload_device))]
mod memory;
#[cfg(not(offload_device))]
mod preload;
#[cfg(not(offload_device))]
mod ranges;
#[cfg(not(offload_device))]
mod rt;
#[cfg(not(offload_device))]
mod stream;
#[cfg(not(offload_device))]
pub mod sys;
#[cfg(not(offload_device))]
mod view;

#[cfg(not(offload_device))]
pub use device::{Device, DeviceMemory, device_name};
pub use device_copy::DeviceCopy;
pub use error::Error;
#[cfg(not(offload_device))]
pub use event::Event;
#[cfg(not(offload_device))]
pub use host_buffer::HostBuffer;
#[cfg(not(offload_device))]
pub use launch::{Dim, Elements, KernelArg, PresentArg, SharedBytes, param};
pub use offload_macros::{DeviceCopy, kernel};
#[cfg(not(offload_device))]
pub use preload::{
    Preload, PreloadMut, preload, preload_mut, reclaim, try_preload, try_preload_mut,
};
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
    (on $device:expr, $($kernel:ident)::+, $grid:expr, $block:expr, shared = $shared:expr, ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::__offload_launch($crate::Device::runtime_id(&$device), $grid, $block, $shared, $($arg),*)
    };
    (on $device:expr, $($kernel:ident)::+, $grid:expr, $block:expr, ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::__offload_launch($crate::Device::runtime_id(&$device), $grid, $block, 0, $($arg),*)
    };
    ($($kernel:ident)::+, $grid:expr, $block:expr, shared = $shared:expr, ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::__offload_launch(-1, $grid, $block, $shared, $($arg),*)
    };
    ($($kernel:ident)::+, $grid:expr, $block:expr, ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::__offload_launch(-1, $grid, $block, 0, $($arg),*)
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
/// explicitly. A preload of data inside a live [`Preload`]'s data, and its drop, do not wait:
/// they make no runtime call, and no queued kernel can write data borrowed shared (unless
/// another thread maps or releases that data at that moment). Returns
/// `Result<(), offload::Error>` once the kernel is enqueued (a kernel that faults is reported
/// by the next call that waits).
#[macro_export]
macro_rules! launch_async {
    (on $device:expr, $($kernel:ident)::+, $grid:expr, $block:expr, shared = $shared:expr, ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::__offload_launch_async($crate::Device::runtime_id(&$device), $grid, $block, $shared, $($arg),*)
    };
    (on $device:expr, $($kernel:ident)::+, $grid:expr, $block:expr, ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::__offload_launch_async($crate::Device::runtime_id(&$device), $grid, $block, 0, $($arg),*)
    };
    ($($kernel:ident)::+, $grid:expr, $block:expr, shared = $shared:expr, ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::__offload_launch_async(-1, $grid, $block, $shared, $($arg),*)
    };
    ($($kernel:ident)::+, $grid:expr, $block:expr, ($($arg:expr),* $(,)?)) => {
        $($kernel)::+::__offload_launch_async(-1, $grid, $block, 0, $($arg),*)
    };
}
