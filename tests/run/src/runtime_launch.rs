//! Shared by the run tests that launch what libomptarget 19's own launch cannot make.

use offload::Error;

/// Whether `result` is the refusal of a launch that libomptarget 19's `__tgt_target_kernel`
/// cannot make (along y or z, or with shared memory), which only a GPU under
/// `OFFLOAD_LAUNCH=runtime` makes: asserts that the program runs so.
pub fn refused(result: &Result<(), Error>) -> bool {
    match result {
        Err(Error::InvalidGeometry { reason, .. }) if reason.contains("OFFLOAD_LAUNCH=runtime") => {
            assert_eq!(std::env::var("OFFLOAD_LAUNCH").as_deref(), Ok("runtime"));
            assert!(offload::device_name().contains("CUDA"), "{}", offload::device_name());
            true
        }
        _ => false,
    }
}
