//! One scenario of the device build per file, its CHECK lines over the image's PTX (its
//! SM90A lines, where it has them, over the sm_90a image's).

mod async_copy;
mod block_order;
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
mod wgmma;
