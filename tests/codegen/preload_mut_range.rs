//! `PreloadMut::sync_range` and `update_range`: each becomes one
//! `__tgt_target_data_update_mapper` of the range alone, FROM (2) and TO (1). Its size is the
//! range's (`(end - start) * 4`, known at run time: stored into a `%.offload_sizes` alloca) and
//! its pointer the range's first element, inside the mapping (no begin or end mapper between
//! them); the return mapper copies the whole slice back when the guard drops (FROM|ALWAYS = 6).
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use offload::preload_mut;

// CHECK-NOT: @.offload_sizes.halo_rows
// CHECK: @.offload_maptypes.halo_rows.preload.0.begin = private unnamed_addr constant [1 x i64] [i64 5]
// CHECK: @.offload_maptypes.halo_rows.update.0.from = private unnamed_addr constant [1 x i64] [i64 2]
// CHECK: @.offload_maptypes.halo_rows.update.1.to = private unnamed_addr constant [1 x i64] [i64 1]
// CHECK: @.offload_maptypes.halo_rows.release.0.end = private unnamed_addr constant [1 x i64] [i64 6]

// CHECK-LABEL: define {{.*}} @halo_rows(ptr
// CHECK: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1,
// The row `w..2w` back: its address (4 bytes an element after the start) and its 4w bytes.
// CHECK: [[FROM_AT:%[0-9]+]] = getelementptr {{.*}}float, ptr %grid.0, i64 %w
// CHECK: [[BYTES:%[^ ]+]] = shl i64 %w, 2
// CHECK-NOT: __tgt_target_data_end_mapper
// CHECK: store ptr [[FROM_AT]], ptr
// CHECK: store i64 [[BYTES]], ptr
// CHECK-NEXT: call void @__tgt_target_data_update_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr {{%\.offload_baseptrs[0-9]*}}, ptr {{%\.offload_ptrs[0-9]*}}, ptr {{%\.offload_sizes[0-9]*}}, ptr @.offload_maptypes.halo_rows.update.0.from, ptr null, ptr null)
// The first row in, edited: its address is the slice's.
// CHECK-NOT: __tgt_target_data_end_mapper
// CHECK: store ptr %grid.0, ptr
// CHECK: store i64 [[BYTES]], ptr
// CHECK-NEXT: call void @__tgt_target_data_update_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr {{%\.offload_baseptrs[0-9]*}}, ptr {{%\.offload_ptrs[0-9]*}}, ptr {{%\.offload_sizes[0-9]*}}, ptr @.offload_maptypes.halo_rows.update.1.to, ptr null, ptr null)
// CHECK: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1,
#[unsafe(no_mangle)]
pub fn halo_rows(grid: &mut [f32], w: usize) -> f32 {
    let mut g = preload_mut(grid);
    let edge = g.sync_range(w..2 * w)[0];
    g.update_range(..w, |row| row[0] = edge);
    edge
}
