//! Procedural macros of the `offload` crate: `#[offload::kernel]` and `#[derive(DeviceCopy)]`.

mod device_copy;
mod kernel;

use proc_macro::TokenStream;

/// Marks a function as an offload kernel.
///
/// In the device images (`cfg(offload_device)`, built by `cargo offload`) it becomes an entry
/// point named after the function: `extern "ptx-kernel"` on nvptx, and on x86_64 an
/// `extern "C"` function that runs the body for every thread of the grid. In the host program
/// it becomes a type of the same name whose launchers `offload::launch!` and
/// `offload::offload!` call.
///
/// A generic kernel (type and const parameters, bounded as its body needs) lists its instances:
/// `#[offload::kernel(instances(f32, f64))]`, or `instances((f32, 16), (f64, 32))` for several
/// parameters. Each is an entry point of its own (`axpy__f32`) in every device image, launched
/// as `launch!(kernels::axpy::<f32>, ..)`; a launch of another instance does not compile.
/// Lifetime parameters need nothing. Parameters are taken by value (`DeviceCopy` data or a
/// `bool`, at most 8 bytes), or as `&T`, `&mut T`, `&[T]`, `&mut [T]` of `DeviceCopy` data.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::expand(attr.into(), item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Implements `offload::DeviceCopy` for a `#[repr(C)]` struct whose fields all implement it.
#[proc_macro_derive(DeviceCopy)]
pub fn derive_device_copy(item: TokenStream) -> TokenStream {
    device_copy::expand(item.into()).unwrap_or_else(syn::Error::into_compile_error).into()
}
