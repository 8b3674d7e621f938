//! `Shared::copy_async` of 16 bytes is one `cp.async.cg` from global memory where the source is
//! device memory and both ends are aligned (tested as the kernel runs), and `commit` / `wait`
//! are the group instructions.

use offload::gpu::{self, async_copy, shared_array};

// CHECK-LABEL: .entry copy_tiles(
// CHECK: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 0;
// CHECK: bar.sync 0;
// CHECK: ret;
#[offload::kernel(launch_bounds = 64)]
pub fn copy_tiles(x: &[f32], y: &mut [f32]) {
    let tile = shared_array::<f32, 256>();
    let t = gpu::thread_idx_x();
    if let Some(part) = x.get(gpu::block_idx_x() * 256 + 4 * t..) {
        tile.copy_async::<4>(4 * t, part);
    }
    async_copy::commit();
    async_copy::wait(0);
    gpu::sync_threads();
    if let Some(y) = y.get_mut(gpu::global_id_x()) {
        *y = tile.read(255 - t);
    }
}
