//! The contract between the offload library, its macros, the lowering and the tools: each name
//! and number here is spelled once, and every side takes it from here. No dependencies, so that
//! the compiler side needs nothing of the user library.

#![no_std]

/// What `#[offload::kernel]` leaves in the device images for the build to find.
pub mod kernel {
    /// Prefix of the exported symbol that names a kernel in the host-offload image (the build
    /// checks that every device image defines every kernel).
    pub const MARKER_PREFIX: &str = "__offload_kernel.";

    /// Prefix of the NVIDIA image's `[u32; 5]` constant that carries a kernel's options to the
    /// device stage: `[threads per block at most (0: no launch bounds), x, y, z at most (0:
    /// any), flags]`. The device stage removes it.
    pub const ATTRS_PREFIX: &str = "__offload_kernel_attrs.";

    /// Flag of [`ATTRS_PREFIX`]: the kernel's `a * b + c` may be one fused multiply-add.
    pub const ATTR_FP_CONTRACT: u32 = 1;
}

/// The NVIDIA image.
pub mod nvptx {
    /// Its target.
    pub const TRIPLE: &str = "nvptx64-nvidia-cuda";

    /// The function whose calls give a kernel the generic address of its block's dynamic shared
    /// memory: declared by the library, defined by the device stage.
    pub const SHARED_MEMORY_FN: &str = "__offload_shared_memory";

    /// The first argument of `offload-ld` that makes it the NVIDIA image's device stage (bitcode
    /// to PTX) instead of the program's link.
    pub const LD_MODE: &str = "nvptx";

    /// The global that libomptarget 19's CUDA plugin writes its `DeviceEnvironmentTy` into when
    /// it loads an image (`cuModuleGetGlobal`, then a copy), and its size: four `u32`s and four
    /// `u64`s (debug kind, devices, device number, dynamic memory; clock frequency, indirect
    /// call table and its size, hardware parallelism). The kernels never read it.
    pub const DEVICE_ENVIRONMENT: &str = "__omp_rtl_device_environment";
    pub const DEVICE_ENVIRONMENT_BYTES: u32 = 48;
}

/// The runtime the lowering targets.
pub mod runtime {
    /// Where the tools look for libomptarget and libomp unless told otherwise: Debian's
    /// `libomp5-19`.
    pub const DEFAULT_DIR: &str = "/usr/lib/llvm-19/lib";
}

/// Whether two strings are equal, where a `const` must check a literal against this crate.
pub const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
