//! The benchmark's kernels.

/// `y = a * x + y`, one element per thread; `get` keeps the kernel free of panic paths.
#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if let (Some(x), Some(y)) = (x.get(i), y.get_mut(i)) {
        *y = a * *x + *y;
    }
}

/// Does nothing: the cost of a launch itself.
#[offload::kernel]
pub fn empty() {}
