//! `preload_mut` and the Drop of its `PreloadMut`: the begin mapper copies the array in
//! (TO|ALWAYS = 5), and the end ("return") mapper at the end of the guard's scope copies it back
//! (FROM|ALWAYS = 6), before the host reads the array again. ALWAYS: the guard holds the only
//! borrow, so the copies happen even over a stale mapping a leaked guard left.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use core::hint::black_box;

use offload::preload_mut;

// CHECK: @.offload_sizes.preload_mut_drop.preload.0 = private unnamed_addr constant [1 x i64] [i64 256]
// CHECK: @.offload_maptypes.preload_mut_drop.preload.0.begin = private unnamed_addr constant [1 x i64] [i64 5]
// CHECK: @.offload_sizes.preload_mut_drop.release.0 = private unnamed_addr constant [1 x i64] [i64 256]
// CHECK: @.offload_maptypes.preload_mut_drop.release.0.end = private unnamed_addr constant [1 x i64] [i64 6]

// CHECK-LABEL: define noundef float @preload_mut_drop(ptr
// CHECK-NEXT: start:
// CHECK-NEXT: [[PTRS_END:%\.offload_ptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[BASE_END:%\.offload_baseptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[PTRS:%\.offload_ptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[BASE:%\.offload_baseptrs[0-9]*]] = alloca [1 x ptr], align 8

// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE]], i32 0, i32 0
// CHECK-NEXT: store ptr %ys, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS]], i32 0, i32 0
// CHECK-NEXT: store ptr %ys, ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr [[BASE]], ptr [[PTRS]], ptr @.offload_sizes.preload_mut_drop.preload.0, ptr @.offload_maptypes.preload_mut_drop.preload.0.begin, ptr null, ptr null)

// The guard's scope ends (the end of `y`'s lifetime): the data comes back, then the host
// reads it.
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE_END]], i32 0, i32 0
// CHECK-NEXT: store ptr [[DATA:%[^,]+]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS_END]], i32 0, i32 0
// CHECK-NEXT: store ptr [[DATA]], ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr [[BASE_END]], ptr [[PTRS_END]], ptr @.offload_sizes.preload_mut_drop.release.0, ptr @.offload_maptypes.preload_mut_drop.release.0.end, ptr null, ptr null)
// The library's record of the mapping learns that the release returned.
// CHECK-NEXT: call void @{{.*}}6ranges6settle(
// CHECK: call void @llvm.lifetime.end.p0(ptr nonnull %y)
// CHECK-NEXT: [[FIRST:%.+]] = load float, ptr %ys, align 4
// CHECK-NEXT: ret float [[FIRST]]
#[unsafe(no_mangle)]
pub fn preload_mut_drop(ys: &mut [f32; 64]) -> f32 {
    {
        let y = preload_mut(ys);
        black_box(&y);
    }
    ys[0]
}
