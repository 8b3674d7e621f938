//! `PreloadMut::sync` and `PreloadMut::update` in the middle of a region: each becomes one
//! `__tgt_target_data_update_mapper`, FROM (2) for `sync` and TO (1) for `update`, with the
//! array's constant size; the mapping stays (no end mapper between them), and the return
//! mapper copies the array back when the guard drops (FROM|ALWAYS = 6).
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use core::hint::black_box;

use offload::preload_mut;

// CHECK: @.offload_maptypes.sync_then_update.preload.0.begin = private unnamed_addr constant [1 x i64] [i64 5]
// CHECK: @.offload_sizes.sync_then_update.update.0 = private unnamed_addr constant [1 x i64] [i64 128]
// CHECK: @.offload_maptypes.sync_then_update.update.0.from = private unnamed_addr constant [1 x i64] [i64 2]
// CHECK: @.offload_sizes.sync_then_update.update.1 = private unnamed_addr constant [1 x i64] [i64 128]
// CHECK: @.offload_maptypes.sync_then_update.update.1.to = private unnamed_addr constant [1 x i64] [i64 1]
// CHECK: @.offload_maptypes.sync_then_update.release.0.end = private unnamed_addr constant [1 x i64] [i64 6]

// CHECK-LABEL: define {{.*}} @sync_then_update(ptr
// CHECK: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr {{%\.offload_baseptrs[0-9]*}}, ptr {{%\.offload_ptrs[0-9]*}}, ptr @.offload_sizes.sync_then_update.preload.0, ptr @.offload_maptypes.sync_then_update.preload.0.begin, ptr null, ptr null)
// CHECK-NOT: __tgt_target_data_end_mapper
// CHECK: call void @__tgt_target_data_update_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr {{%\.offload_baseptrs[0-9]*}}, ptr {{%\.offload_ptrs[0-9]*}}, ptr @.offload_sizes.sync_then_update.update.0, ptr @.offload_maptypes.sync_then_update.update.0.from, ptr null, ptr null)
// The host reads the synchronised copy, then edits it and pushes it back.
// CHECK-NOT: __tgt_target_data_end_mapper
// CHECK: call void @__tgt_target_data_update_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr {{%\.offload_baseptrs[0-9]*}}, ptr {{%\.offload_ptrs[0-9]*}}, ptr @.offload_sizes.sync_then_update.update.1, ptr @.offload_maptypes.sync_then_update.update.1.to, ptr null, ptr null)
// CHECK: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr {{%\.offload_baseptrs[0-9]*}}, ptr {{%\.offload_ptrs[0-9]*}}, ptr @.offload_sizes.sync_then_update.release.0, ptr @.offload_maptypes.sync_then_update.release.0.end, ptr null, ptr null)
#[unsafe(no_mangle)]
pub fn sync_then_update(ys: &mut [f32; 32]) -> f32 {
    let mut y = preload_mut(ys);
    let first = y.sync()[0];
    y.update(|host| host[1] = first);
    black_box(&y);
    first
}
