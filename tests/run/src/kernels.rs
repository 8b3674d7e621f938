//! Kernels shared by the run tests.

use offload::DeviceCopy;

/// Scale and offset applied by `affine`.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Affine {
    pub scale: f32,
    pub offset: f32,
}

/// `y = a * x + y`.
#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// `y = p.scale * y + p.offset`, the parameters read through a reference.
#[offload::kernel]
pub fn affine(p: &Affine, y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = p.scale * y[i] + p.offset;
    }
}

/// `y[i] += 1`.
#[offload::kernel]
pub fn increment(y: &mut [u32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] += 1;
    }
}

/// Takes scalars only: nothing to map.
#[offload::kernel]
pub fn scalars_only(a: f32, b: u64, c: i32) {
    let _ = (a, b, c);
}

/// `y[i] = 1`, bounds-checked: an index past the end panics, which traps on a GPU.
#[offload::kernel]
pub fn write_at(y: &mut [u32], i: u32) {
    y[i as usize] = 1;
}

/// `y = a + b`, from two slices read through shared references.
#[offload::kernel]
pub fn add(a: &[f32], b: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a[i] + b[i];
    }
}

/// `out[i] = window[i % window.len()] / sum(whole)`: two shared slices that may overlap.
#[offload::kernel]
pub fn normalise(window: &[f32], whole: &[f32], out: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < out.len() && !window.is_empty() {
        let mut sum = 0.0;
        for x in whole {
            sum += *x;
        }
        out[i] = window[i % window.len()] / sum;
    }
}
