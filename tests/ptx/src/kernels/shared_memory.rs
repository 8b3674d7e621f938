//! Shared memory is the shared state space: the device stage defines the block's window as an
//! `addrspace(3)` global, so reads, writes and atomics through `offload::gpu::shared` are
//! `ld.shared`, `st.shared` and `atom.shared`, not generic accesses that test the window at run
//! time; four aligned `f32`s read together are one vector load. (By name, the PTX's order.)

use offload::gpu::{self, shared, shared_array};

// CHECK: .extern .shared .align 1024 .b8 __offload_shared[];

// CHECK-LABEL: .entry shared_counts(
// CHECK: atom.shared.add.u32
// CHECK-NOT: atom.add.u32
// CHECK: ret;
#[offload::kernel]
pub fn shared_counts(values: &[u32], counts: &mut [u32]) {
    let bins = shared_array::<u32, 16>();
    if let Some(&v) = values.get(gpu::global_id_x()) {
        bins.fetch_add((v % 16) as usize, 1);
    }
    gpu::sync_threads();
    if let Some(c) = counts.get_mut(gpu::thread_idx_x()) {
        *c = bins.read(gpu::thread_idx_x() % 16);
    }
}

// CHECK-LABEL: .entry shared_round_trip(
// CHECK: st.shared.b32
// CHECK: bar.sync 0;
// CHECK: ld.shared.b32
// CHECK-NOT: ld.b32
// CHECK: ret;
#[offload::kernel]
pub fn shared_round_trip(out: &mut [f32]) {
    let t = gpu::thread_idx_x();
    let tile = shared::<f32>();
    tile.write(t, t as f32);
    gpu::sync_threads();
    if let Some(o) = out.get_mut(t) {
        *o = tile.read(tile.len() - 1 - t);
    }
}

// CHECK-LABEL: .entry shared_vectors(
// CHECK: ld.shared.v4.b32
// CHECK: ret;
#[offload::kernel]
pub fn shared_vectors(out: &mut [f32]) {
    let t = gpu::thread_idx_x();
    let four: [f32; 4] = shared::<f32>().read_array(t * 4);
    if let Some(o) = out.get_mut(t) {
        *o = four[0] + four[1] + four[2] + four[3];
    }
}
