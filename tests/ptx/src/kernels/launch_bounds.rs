//! `launch_bounds` is the PTX's `.maxntid` (ptxas budgets registers for that many threads, and
//! `min_blocks` for that many blocks of them), and
//! bounds along each axis let the optimiser drop the checks of indices made from thread indices:
//! with blocks of at most 32 x 8, `(ty + 24) * 33 + tx` is below a 32 x 33 shared array's
//! length, so the bounded kernel's only panic left is the array's own length check (the
//! launch's shared memory must hold it), where the same kernel unbounded checks every access.
//! (The kernels of a file are checked in the PTX's order: by name.)

use offload::gpu::{self, shared_array};

// `min_blocks` is PTX's `.minnctapersm`: the GPU's compiler keeps the registers within what
// that many blocks of 128 threads leave each.
// CHECK-LABEL: .entry bounded_resident(
// CHECK: .maxntid 128{{$}}
// CHECK-NEXT: .minnctapersm 4
// CHECK: ret;
#[offload::kernel(launch_bounds = 128, min_blocks = 4)]
pub fn bounded_resident(out: &mut [u32]) {
    if let Some(o) = out.get_mut(gpu::global_id_x()) {
        *o = 2;
    }
}

// CHECK-LABEL: .entry bounded_threads(
// CHECK: .maxntid 256{{$}}
// CHECK: ret;
#[offload::kernel(launch_bounds = 256)]
pub fn bounded_threads(out: &mut [u32]) {
    if let Some(o) = out.get_mut(gpu::global_id_x()) {
        *o = 1;
    }
}

// CHECK-LABEL: .entry bounded_tile(
// CHECK: .maxntid 32, 8, 1
// CHECK: call.uni
// CHECK-NOT: call.uni
// CHECK: {{^}}}{{$}}
#[offload::kernel(launch_bounds = (32, 8))]
pub fn bounded_tile(out: &mut [f32]) {
    tile_sums(out)
}

// CHECK-LABEL: .entry unbounded_tile(
// CHECK-NOT: .maxntid
// CHECK-COUNT-3: call.uni
// CHECK: {{^}}}{{$}}
#[offload::kernel]
pub fn unbounded_tile(out: &mut [f32]) {
    tile_sums(out)
}

/// Each thread writes four elements of a 32 x 33 tile and reads four of its transpose.
#[inline(always)]
fn tile_sums(out: &mut [f32]) {
    let tile = shared_array::<f32, { 32 * 33 }>();
    let (tx, ty) = (gpu::thread_idx_x(), gpu::thread_idx_y());
    for j in (0..32).step_by(8) {
        tile.write((ty + j) * 33 + tx, (tx + j) as f32);
    }
    gpu::sync_threads();
    let mut sum = 0.0;
    for j in (0..32).step_by(8) {
        sum += tile.read(tx * 33 + ty + j);
    }
    if let Some(o) = out.get_mut(gpu::global_id_x()) {
        *o = sum;
    }
}
