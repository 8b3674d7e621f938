//! `preload` of a slice: its size is only known at run time, so there is no `.offload_sizes`
//! global. The size (`len * 4`) is stored into a `%.offload_sizes` alloca right before the begin
//! mapper (TO), and again before the end mapper (map type 0) when the `Preload` is dropped.
//! The library skips both for an empty slice.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use core::hint::black_box;

use offload::preload;

// CHECK-NOT: @.offload_sizes.preload_slice
// CHECK: @.offload_maptypes.preload_slice.preload.0.begin = private unnamed_addr constant [1 x i64] [i64 1]
// CHECK: @.offload_maptypes.preload_slice.release.0.end = private unnamed_addr constant [1 x i64] zeroinitializer
// CHECK-NOT: @.offload_sizes.preload_slice

// CHECK-LABEL: define void @preload_slice(ptr
// CHECK-SAME: %xs.0, i64
// CHECK-SAME: %xs.1)
// CHECK-NEXT: start:
// CHECK-NEXT: [[SIZES_END:%\.offload_sizes[0-9]*]] = alloca [1 x i64], align 8
// CHECK-NEXT: [[PTRS_END:%\.offload_ptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[BASE_END:%\.offload_baseptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[SIZES:%\.offload_sizes[0-9]*]] = alloca [1 x i64], align 8
// CHECK-NEXT: [[PTRS:%\.offload_ptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[BASE:%\.offload_baseptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK: [[BYTES:%[0-9]+]] = shl nuw nsw i64 %xs.1, 2

// The begin mapper, with the size stored at run time.
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE]], i32 0, i32 0
// CHECK-NEXT: store ptr %xs.0, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS]], i32 0, i32 0
// CHECK-NEXT: store ptr %xs.0, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x i64], ptr [[SIZES]], i32 0, i32 0
// CHECK-NEXT: store i64 [[BYTES]], ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr [[BASE]], ptr [[PTRS]], ptr [[SIZES]], ptr @.offload_maptypes.preload_slice.preload.0.begin, ptr null, ptr null)

// The end mapper, with the size recomputed from the guard.
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE_END]], i32 0, i32 0
// CHECK-NEXT: store ptr [[DATA:%[^,]+]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS_END]], i32 0, i32 0
// CHECK-NEXT: store ptr [[DATA]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x i64], ptr [[SIZES_END]], i32 0, i32 0
// CHECK-NEXT: store i64 [[BYTES_END:%[0-9]+]], ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr [[BASE_END]], ptr [[PTRS_END]], ptr [[SIZES_END]], ptr @.offload_maptypes.preload_slice.release.0.end, ptr null, ptr null)
#[unsafe(no_mangle)]
pub fn preload_slice(xs: &[f32]) {
    let x = preload(xs);
    black_box(&x);
}
