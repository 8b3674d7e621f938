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

    /// Where [`ATTRS_PREFIX`]'s flags hold the blocks of the kernel each multiprocessor should
    /// hold at once (CUDA's `__launch_bounds__` second argument, PTX's `.minnctapersm`; 0: no
    /// such wish), a byte from this bit on.
    pub const ATTR_MIN_BLOCKS_SHIFT: u32 = 8;

    /// The environment variable in which the build names the kernels module to the host
    /// program's compilation (`kernels` for `src/kernels.rs`): `#[offload::kernel]` refuses a
    /// kernel outside it, which no device image would hold.
    pub const MODULE_ENV: &str = "OFFLOAD_KERNELS_MODULE";
}

/// The host-offload image: the kernels for libomptarget's x86_64 host plugin.
pub mod host_offload {
    /// Its target.
    pub const TRIPLE: &str = "x86_64-unknown-linux-gnu";
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

/// The marker functions ("intrinsics") the library calls and the lowering rewrites, and the
/// kinds their operands carry.
pub mod intrinsics {
    /// Prefix every marker and every symbol the library declares for the lowering shares; an
    /// unknown name under it is the lowering's error.
    pub const PREFIX: &str = "__rust_offload_";

    /// `*const u8`: the embedded cubin, or null (the library's `extern static`, the lowering's
    /// definition).
    pub const CUDA_IMAGE: &str = "__rust_offload_cuda_image";
    /// `i64`: the cubin's length in bytes, or 0.
    pub const CUDA_IMAGE_LEN: &str = "__rust_offload_cuda_image_len";
    /// `*const c_char`: the PTX the cubin was assembled from, NUL-terminated, or null.
    pub const CUDA_PTX: &str = "__rust_offload_cuda_ptx";

    /// Name of the preload marker: `(device: i64, ptr: *const u8, size: i64, kind: i64)`.
    pub const PRELOAD: &str = "__rust_offload_preload";
    /// Name of the release marker (the Drop of a preload guard), same operands as [`PRELOAD`].
    pub const RELEASE: &str = "__rust_offload_release";
    /// Name of the update marker: `(device: i64, ptr: *const u8, size: i64, direction: i64)`, a
    /// copy between the host data and its present device copy, the mapping unchanged.
    pub const UPDATE: &str = "__rust_offload_update";
    /// Prefix of the per-kernel launch markers: `__rust_offload_launch.<kernel symbol>`.
    ///
    /// Operands: `(device: i64, grid_x: i32, block_x: i32, then one (kind: i64, value: ptr,
    /// size: i64) triple per kernel parameter slot)`; returns the runtime's `i32` status. The size
    /// of a `MAP_TO`/`MAP_TO_FROM` slot is the bytes the launch's mappers map at `value`: the
    /// data's, or 0 where the library has mapped that data already for the launch (overlapping
    /// `&T` arguments, mapped as one range), which the runtime then finds inside that mapping
    /// without a copy, as OpenMP maps a zero-length array section.
    pub const LAUNCH_PREFIX: &str = "__rust_offload_launch.";

    /// What a preload or release maps: the kind operand of [`PRELOAD`] and [`RELEASE`].
    pub mod preload_kind {
        /// `Preload<T>`: copied in once, released without a copy back.
        pub const READ: i64 = 0;
        /// `PreloadMut<T>`: copied in once, copied back when released.
        pub const READ_WRITE: i64 = 1;
    }

    /// Which way an update copies: the direction operand of [`UPDATE`].
    pub mod update_direction {
        /// Device to host (`PreloadMut::sync`).
        pub const FROM_DEVICE: i64 = 0;
        /// Host to device (`PreloadMut::update`).
        pub const TO_DEVICE: i64 = 1;
    }

    /// How one kernel parameter slot is passed: the kind operand of a launch marker triple.
    pub mod arg_kind {
        /// A scalar passed by value in the slot (`LITERAL`).
        pub const LITERAL: i64 = 0;
        /// `&T` mapped around this one launch: copied in, not copied back.
        pub const MAP_TO: i64 = 1;
        /// `&mut T` mapped around this one launch: copied in and back.
        pub const MAP_TO_FROM: i64 = 2;
        /// A `Preload`/`PreloadMut`: already on the device, passed without copies.
        pub const PRESENT: i64 = 3;

        /// Whether a slot of this kind is data the launch maps around itself (`MAP_TO`,
        /// `MAP_TO_FROM`).
        #[inline(always)]
        pub const fn mapped_by_launch(kind: i64) -> bool {
            kind == MAP_TO || kind == MAP_TO_FROM
        }
    }
}

/// The runtime the lowering targets.
/// The library's entry points that the constructors the lowering emits call, by name.
pub mod entry {
    /// `(names: *const *const c_char, table: *mut *const c_void, n: usize, table_bytes: usize)`:
    /// the runtime's loader, called before every other constructor with the names of the
    /// runtime functions the program calls and the table its calls go through.
    pub const LOAD_RUNTIME: &str = "__offload_load_runtime";
    /// `(image: *const u8, len: i64)`: called with the embedded cubin before a program that
    /// embeds an NVIDIA image registers it.
    pub const BEFORE_CUDA_REGISTER: &str = "__offload_before_cuda_register";
}

/// What `cargo offload` tells its link stage, offload-ld, through environment variables (the
/// linker is run by rustc, so its arguments are rustc's).
pub mod link_env {
    /// `TRIPLE=PATH` pairs separated by `;`: the device images to embed.
    pub const IMAGES: &str = "OFFLOAD_LD_IMAGES";
    /// The PTX the NVIDIA image was assembled from, embedded for the library's own CUDA module.
    pub const CUDA_PTX: &str = "OFFLOAD_LD_CUDA_PTX";
    /// `llvm19` or `current`.
    pub const ABI: &str = "OFFLOAD_LD_ABI";
    /// The folder holding libomptarget and libomp.
    pub const RUNTIME_DIR: &str = "OFFLOAD_LD_RUNTIME_DIR";
    /// Print every command run.
    pub const VERBOSE: &str = "OFFLOAD_LD_VERBOSE";
    /// Keep the lowered IR of every unit and of the glue in this folder.
    pub const SAVE_TEMPS: &str = "OFFLOAD_LD_SAVE_TEMPS";
    /// Optimisation level of the lowered module (0-3, default 3).
    pub const OPT_LEVEL: &str = "OFFLOAD_LD_OPT_LEVEL";
    /// The folder keeping each unit's object between links (none: every link compiles all).
    pub const CACHE: &str = "OFFLOAD_LD_CACHE";
    /// The C compiler driver that links (default `cc`).
    pub const CC: &str = "OFFLOAD_LD_CC";
}

/// A cubin as libomptarget 19 reads it: ELF ABI version 7 (CUDA up to 12; CUDA 13's ptxas writes
/// 8, which moves the SM), with the SM in the low byte of `e_flags`.
pub mod cubin {
    /// `e_ident[EI_OSABI]` of a cubin (LLVM's `ELFOSABI_CUDA`).
    pub const ELFOSABI_CUDA: u8 = 51;
    /// `e_ident[EI_ABIVERSION]` of the cubins libomptarget 19 loads (CUDA 11.8's ptxas).
    pub const ABI_VERSION: u8 = 7;
    /// `e_ident[EI_ABIVERSION]` of CUDA 13's cubins.
    pub const CUDA_13_ABI_VERSION: u8 = 8;
    /// The SM number's bits of `e_flags` in ABI version 7 (LLVM's `EF_CUDA_SM`).
    pub const EF_CUDA_SM: u32 = 0xff;

    /// The SM an ELF image is built for (90 for sm_90), as the runtime reads it: `None` for
    /// what is not an ELF file.
    pub fn sm(image: &[u8]) -> Option<u32> {
        // `e_flags` of an ELF64 header, little-endian.
        let flags: [u8; 4] = image.get(48..52)?.try_into().ok()?;
        image.starts_with(b"\x7fELF").then(|| u32::from_le_bytes(flags) & EF_CUDA_SM)
    }
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn a_cubins_sm_is_the_low_byte_of_its_flags() {
        let mut header = [0u8; 64];
        header[..4].copy_from_slice(b"\x7fELF");
        header[48..52].copy_from_slice(&0x005a_055au32.to_le_bytes());
        assert_eq!(super::cubin::sm(&header), Some(90));
        assert_eq!(super::cubin::sm(&header[..40]), None);
        header[0] = 0;
        assert_eq!(super::cubin::sm(&header), None);
    }
}
