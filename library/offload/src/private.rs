//! Support for the code `#[offload::kernel]` and the launch macros generate, and a few hooks
//! the tests look through. Not a public API.

pub use crate::device_param::{Param, SizedData};
#[cfg(not(offload_device))]
pub use crate::entry::cuda_image;
pub use crate::geometry::Geometry;
#[cfg(not(offload_device))]
pub use crate::launch::{check_partition, launch};
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

/// Whether the runtime's table was made read-only once filled (for tests).
#[cfg(not(offload_device))]
pub fn runtime_table_sealed() -> bool {
    crate::rt::runtime_table_sealed()
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
