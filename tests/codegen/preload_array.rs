//! `preload` of a fixed-size array: one begin mapper with map type TO, whose size is a constant
//! global (`.offload_sizes.<site>`, 256 x f32 = 1024 bytes) since it is known at compile time.
//! Dropping the `Preload` releases the data with one end mapper of map type 0: nothing is copied
//! back.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use core::hint::black_box;

use offload::preload;

// CHECK: %struct.ident_t = type { i32, i32, i32, i32, ptr }

// CHECK: @.offload.loc.str = private unnamed_addr constant [23 x i8] c";unknown;unknown;0;0;;\00"
// CHECK: @.offload.loc = private unnamed_addr constant %struct.ident_t { i32 0, i32 2, i32 0, i32 22, ptr @.offload.loc.str }
// CHECK: @.offload_sizes.preload_array.preload.0 = private unnamed_addr constant [1 x i64] [i64 1024]
// CHECK: @.offload_maptypes.preload_array.preload.0.begin = private unnamed_addr constant [1 x i64] [i64 1]
// CHECK: @.offload_sizes.preload_array.release.0 = private unnamed_addr constant [1 x i64] [i64 1024]
// CHECK: @.offload_maptypes.preload_array.release.0.end = private unnamed_addr constant [1 x i64] zeroinitializer

// CHECK-LABEL: define void @preload_array(ptr
// CHECK-NEXT: start:
// CHECK-NEXT: [[PTRS_END:%\.offload_ptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[BASE_END:%\.offload_baseptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[PTRS:%\.offload_ptrs[0-9]*]] = alloca [1 x ptr], align 8
// CHECK-NEXT: [[BASE:%\.offload_baseptrs[0-9]*]] = alloca [1 x ptr], align 8

// The begin mapper, where `preload` called the marker.
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE]], i32 0, i32 0
// CHECK-NEXT: store ptr %xs, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS]], i32 0, i32 0
// CHECK-NEXT: store ptr %xs, ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr [[BASE]], ptr [[PTRS]], ptr @.offload_sizes.preload_array.preload.0, ptr @.offload_maptypes.preload_array.preload.0.begin, ptr null, ptr null)

// The end mapper, where the `Preload` is dropped.
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE_END]], i32 0, i32 0
// CHECK-NEXT: store ptr [[DATA:%[^,]+]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS_END]], i32 0, i32 0
// CHECK-NEXT: store ptr [[DATA]], ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr [[BASE_END]], ptr [[PTRS_END]], ptr @.offload_sizes.preload_array.release.0, ptr @.offload_maptypes.preload_array.release.0.end, ptr null, ptr null)
// CHECK: ret void
#[unsafe(no_mangle)]
pub fn preload_array(xs: &[f32; 256]) {
    let x = preload(xs);
    black_box(&x);
}

// The markers are gone; the runtime's entry points are declared.
// CHECK-NOT: __rust_offload_
// CHECK: declare void @__tgt_target_data_begin_mapper(ptr, i64, i32, ptr, ptr, ptr, ptr, ptr, ptr)
// CHECK: declare void @__tgt_target_data_end_mapper(ptr, i64, i32, ptr, ptr, ptr, ptr, ptr, ptr)
