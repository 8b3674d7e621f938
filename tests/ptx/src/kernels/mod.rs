//! One scenario of the device build per file, its CHECK lines over the image's PTX.

mod async_copy;
mod device_environment;
mod fp_contract;
mod generic;
mod half_precision;
mod launch_bounds;
mod matrix;
mod mma;
mod shared_memory;
mod unroll;
mod vector_loads;
