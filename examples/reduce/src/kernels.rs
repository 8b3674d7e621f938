//! The reduction kernel: a block's sum in its shared memory, then one atomic addition per block.

use offload::gpu::{atomic, block_dim_x, global_id_x, shared, sync_threads, thread_idx_x};

/// Adds every value into `total`. Each block sums its part by halves in shared memory (launched
/// with `shared = block * 8` bytes, a power-of-two block), a barrier between the steps; its
/// first thread then adds the block's sum into `total` atomically.
#[offload::kernel]
pub fn sum(values: &[f64], total: &mut f64) {
    let partial = shared::<f64>();
    let t = thread_idx_x();
    // A grid-stride loop: each thread first adds up its share of the values.
    let (mut i, mut mine) = (global_id_x(), 0.0);
    let stride = offload::gpu::global_size_x();
    while i < values.len() {
        mine += values[i];
        i += stride;
    }
    partial.write(t, mine);
    let mut half = block_dim_x() / 2;
    while half > 0 {
        sync_threads();
        if t < half {
            partial.write(t, partial.read(t) + partial.read(t + half));
        }
        half /= 2;
    }
    if t == 0 {
        atomic::fetch_add(total, partial.read(0));
    }
}
