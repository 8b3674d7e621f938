//! Raw declarations of the OpenMP offload runtime entry points (libomptarget / libomp).
//!
//! Nothing here is checked; the library's own (private) `rt` module wraps them. The mapping
//! and launch entry points (`__tgt_target_data_begin_mapper` and friends) are called only from
//! code the lowering emits, so they are declared in the IR, not here.

use core::ffi::c_int;

unsafe extern "C" {
    /// Number of non-host devices the runtime can offload to.
    /// <https://www.openmp.org/spec-html/5.2/openmpsu160.html>
    pub fn omp_get_num_devices() -> c_int;
    /// The device used when a construct names none (`-1` in the runtime calls).
    pub fn omp_get_default_device() -> c_int;
    /// The device number that stands for the host itself.
    pub fn omp_get_initial_device() -> c_int;
    /// Non-zero when `ptr` is mapped on `device_num`.
    pub fn omp_target_is_present(ptr: *const core::ffi::c_void, device_num: c_int) -> c_int;
    /// The device address `ptr` is mapped to on `device_num` (interior addresses of a mapping
    /// included), or null when it is not mapped (OpenMP 5.1).
    pub fn omp_get_mapped_ptr(
        ptr: *const core::ffi::c_void,
        device_num: c_int,
    ) -> *mut core::ffi::c_void;
    /// Copies `length` bytes from `src + src_offset` on `src_device_num` to `dst + dst_offset`
    /// on `dst_device_num` (either may be the initial device, the host); 0 on success.
    pub fn omp_target_memcpy(
        dst: *mut core::ffi::c_void,
        src: *const core::ffi::c_void,
        length: usize,
        dst_offset: usize,
        src_offset: usize,
        dst_device_num: c_int,
        src_device_num: c_int,
    ) -> c_int;
}

unsafe extern "C" {
    /// Page-locked host memory from the runtime's allocator for `device_num` (LLVM extension;
    /// `cuMemAllocHost` on the CUDA plugin, `malloc` on the host plugin).
    pub fn llvm_omp_target_alloc_host(size: usize, device_num: c_int) -> *mut core::ffi::c_void;
    /// Frees memory from [`llvm_omp_target_alloc_host`].
    pub fn llvm_omp_target_free_host(ptr: *mut core::ffi::c_void, device_num: c_int);
}
