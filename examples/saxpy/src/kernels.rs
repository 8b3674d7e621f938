//! The kernels of the saxpy example: compiled for the device images and, as launchers, into the
//! host program.

/// `y = a * x + y`, one element per thread.
#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}
