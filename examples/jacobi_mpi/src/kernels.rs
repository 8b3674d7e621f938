//! The kernels of one rank: a Jacobi step over its rows of the plate, and a sum of its rows.

use offload::gpu::{atomic, block_dim_x, global_id_x, global_id_y, shared, sync_threads};
use offload::gpu::{thread_idx_x, warp};

/// `dst[c] = (up + down + left + right) / 4` for the cells of the buffer's rows `begin..end`
/// that are inside the plate; the plate's border cells are copied. The buffer holds the
/// plate's rows from `first` on; the plate is `width` cells wide and `height` rows high.
/// Launched as a 2D grid: x along a row, y over the rows from `begin`.
#[offload::kernel]
pub fn jacobi_rows(
    width: u32,
    height: u32,
    first: u32,
    begin: u32,
    end: u32,
    src: &[f64],
    dst: &mut [f64],
) {
    let w = width as usize;
    let (x, y) = (global_id_x(), global_id_y() + begin as usize);
    if x >= w || y >= end as usize {
        return;
    }
    let row = first as usize + y;
    let cell = y * w + x;
    dst[cell] = if x == 0 || x == w - 1 || row == 0 || row == height as usize - 1 {
        src[cell]
    } else {
        0.25 * (src[cell - w] + src[cell + w] + src[cell - 1] + src[cell + 1])
    };
}

/// Adds every value into `total`: each block sums its share by warp shuffles and shared memory
/// (launched with `shared = (block / 32) * 8` bytes), then adds it atomically.
#[offload::kernel]
pub fn sum(values: &[f64], total: &mut f64) {
    let warp_sums = shared::<f64>();
    let (t, lane) = (thread_idx_x(), warp::lane_id());
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
