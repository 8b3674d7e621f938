//! `offload::gpu::wgmma`: in the sm_90a image one `asm` block a call, the proxy fence and the
//! warpgroup fence, one `wgmma.mma_async` per k-step of 16 with both operands described in
//! shared memory, then the commit and the wait; in the sm_90 image the warps' `mma.sync` over
//! the same tiles. Tiles are filled by 16-byte `cp.async`.

use offload::bf16;
use offload::gpu::mma::Accumulator;
use offload::gpu::wgmma::{self, Tile};
use offload::gpu::{Matrix, MatrixMut, async_copy, shared, thread_idx_x};

// CHECK-LABEL: .entry wgmma_bf16(
// CHECK: cp.async.cg.shared.global
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: wgmma
// CHECK: ret;
// SM90A-LABEL: .entry wgmma_bf16(
// SM90A: cp.async.cg.shared.global
// SM90A: fence.proxy.async.shared::cta;
// SM90A-NEXT: wgmma.fence.sync.aligned;
// SM90A-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[{]%[rf][0-9]+, .*[}]}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 1;
// SM90A-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90A-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90A-NEXT: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// SM90A-NEXT: wgmma.commit_group.sync.aligned;
// SM90A-NEXT: wgmma.wait_group.sync.aligned 0;
// SM90A-NOT: mma.sync
// SM90A: ret;
#[offload::kernel(launch_bounds = 128)]
pub fn wgmma_bf16(a: &[bf16], b: &[bf16], c: &mut [f32]) {
    let (a, b) = (Matrix::new(a, 64, 64), Matrix::new(b, 64, 128));
    let tiles = shared::<bf16>();
    let (at, bt) = (Tile::new(&tiles, 0, 64, 64), Tile::new(&tiles, 64 * 64, 64, 128));
    let t = thread_idx_x();
    at.copy_async_from::<8>(&a, 0, 0, t, 128);
    bt.copy_async_from::<8>(&b, 0, 0, t, 128);
    async_copy::commit();
    async_copy::wait(0);
    offload::gpu::sync_threads();
    let mut acc = [Accumulator::<bf16>::zero(); 16];
    wgmma::mma(&at, &bt, &mut acc);
    wgmma::store(&acc, &mut MatrixMut::new(c, 64, 128), 0, 0);
}
