//! The solver's own steps.

use offload::gpu::global_id_x;

/// `to = from`.
#[offload::kernel]
pub fn copy(from: &[f32], to: &mut [f32]) {
    let i = global_id_x();
    if i < to.len() && i < from.len() {
        to[i] = from[i];
    }
}

/// `x += omega * r`.
#[offload::kernel]
pub fn step(omega: f32, r: &[f32], x: &mut [f32]) {
    let i = global_id_x();
    if i < x.len() && i < r.len() {
        x[i] += omega * r[i];
    }
}
