//! The library's side of the program the lowering emits: the entry points its constructors
//! call by name (the runtime's loader, the hook before the cubin registers), and the embedded
//! NVIDIA image it defines, which the library's own CUDA module loads.

use crate::stream::CudaImage;

// The declarations' names are literals (a `link_name` must be), checked against the contract.
const _: () =
    assert!(offload_abi::same(offload_abi::intrinsics::CUDA_IMAGE, "__rust_offload_cuda_image"));
const _: () = assert!(offload_abi::same(
    offload_abi::intrinsics::CUDA_IMAGE_LEN,
    "__rust_offload_cuda_image_len"
));
const _: () =
    assert!(offload_abi::same(offload_abi::intrinsics::CUDA_PTX, "__rust_offload_cuda_ptx"));

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
#[unsafe(no_mangle)]
pub(crate) unsafe extern "C" fn __offload_load_runtime(
    names: *const *const core::ffi::c_char,
    table: *mut *const core::ffi::c_void,
    n: usize,
    table_bytes: usize,
) {
    // SAFETY: per the caller.
    unsafe { crate::rt::load_runtime(names, table, n, table_bytes) }
}

/// Called by the registration constructor the offload lowering emits, before a program that
/// embeds an NVIDIA image registers it, with that image: see `rt::before_cuda_register`.
///
/// # Safety
/// `image` must point to the `len` bytes of the embedded cubin.
#[unsafe(no_mangle)]
pub(crate) unsafe extern "C" fn __offload_before_cuda_register(image: *const u8, len: i64) {
    // SAFETY: per the caller.
    unsafe { crate::rt::before_cuda_register(image, len) };
}
