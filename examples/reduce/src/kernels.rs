//! The reduction kernel: a block's sum by warp shuffles, then one atomic addition per block.

use offload::gpu::{atomic, block_dim_x, global_id_x, shared, sync_threads, thread_idx_x, warp};

/// Adds every value into `total`. Each warp of a block sums its threads' shares by shuffles
/// and puts its sum in the block's shared memory (launched with `shared = (block / 32) * 8`
/// bytes, a block of whole warps); after a barrier the first warp sums those, and its first
/// thread adds the block's sum into `total` atomically.
#[offload::kernel]
pub fn sum(values: &[f64], total: &mut f64) {
    let warp_sums = shared::<f64>();
    let (t, lane) = (thread_idx_x(), warp::lane_id());
    // A grid-stride loop: each thread first adds up its share of the values.
    let (mut i, mut mine) = (global_id_x(), 0.0);
    let stride = offload::gpu::global_size_x();
    while i < values.len() {
        mine += values[i];
        i += stride;
    }
    let mine = warp::sum(mine);
    if lane == 0 {
        warp_sums.write(t / warp::WARP_SIZE, mine);
    }
    sync_threads();
    if t < warp::WARP_SIZE {
        let warps = block_dim_x() / warp::WARP_SIZE;
        let block = warp::sum(if t < warps { warp_sums.read(t) } else { 0.0 });
        if t == 0 {
            atomic::fetch_add(total, block);
        }
    }
}
