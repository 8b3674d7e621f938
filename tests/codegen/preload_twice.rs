//! Two `preload`s of the same data: two begin mappers (TO) and, when the guards drop in reverse
//! order, two end mappers; the runtime counts the references. Neither end mapper copies back:
//! no map type of this function has FROM. (The third end mapper releases the first guard on the
//! unwind path of the second `preload`, which panics when the mapping fails.)
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use core::hint::black_box;

use offload::preload;

// CHECK: @.offload_sizes.preload_twice.preload.0 = private unnamed_addr constant [1 x i64] [i64 64]
// CHECK: @.offload_maptypes.preload_twice.preload.0.begin = private unnamed_addr constant [1 x i64] [i64 1]
// CHECK: @.offload_sizes.preload_twice.preload.1 = private unnamed_addr constant [1 x i64] [i64 64]
// CHECK: @.offload_maptypes.preload_twice.preload.1.begin = private unnamed_addr constant [1 x i64] [i64 1]
// CHECK: @.offload_sizes.preload_twice.release.0 = private unnamed_addr constant [1 x i64] [i64 64]
// CHECK: @.offload_maptypes.preload_twice.release.0.end = private unnamed_addr constant [1 x i64] zeroinitializer
// CHECK: @.offload_sizes.preload_twice.release.1 = private unnamed_addr constant [1 x i64] [i64 64]
// CHECK: @.offload_maptypes.preload_twice.release.1.end = private unnamed_addr constant [1 x i64] zeroinitializer
// CHECK: @.offload_sizes.preload_twice.release.2 = private unnamed_addr constant [1 x i64] [i64 64]
// CHECK: @.offload_maptypes.preload_twice.release.2.end = private unnamed_addr constant [1 x i64] zeroinitializer
// CHECK-NOT: @.offload_maptypes.preload_twice

// CHECK-LABEL: define void @preload_twice(ptr

// `let a = preload(xs)`
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE_A:%\.offload_baseptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr %xs, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS_A:%\.offload_ptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr %xs, ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr [[BASE_A]], ptr [[PTRS_A]], ptr @.offload_sizes.preload_twice.preload.0, ptr @.offload_maptypes.preload_twice.preload.0.begin, ptr null, ptr null)

// `let b = preload(xs)`: the same address, mapped again.
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE_B:%\.offload_baseptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr %xs, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS_B:%\.offload_ptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr %xs, ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, ptr [[BASE_B]], ptr [[PTRS_B]], ptr @.offload_sizes.preload_twice.preload.1, ptr @.offload_maptypes.preload_twice.preload.1.begin, ptr null, ptr null)

// `b` then `a` are dropped: two releases of the same data.
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE:%\.offload_baseptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr [[B:%[^,]+]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS:%\.offload_ptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr [[B]], ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr [[BASE]], ptr [[PTRS]], ptr @.offload_sizes.preload_twice.release.0, ptr @.offload_maptypes.preload_twice.release.0.end, ptr null, ptr null)
// CHECK-NEXT: call void @llvm.lifetime.end.p0(ptr nonnull %b)
// CHECK-NEXT: [[A:%[^ ]+]] = load ptr, ptr %a, align 8
// The guard's device (-1, the default, stored when `a` was made: `b` escaped to black_box).
// CHECK-NEXT: {{%[^ ]+}} = load i64, ptr {{%[^ ]+}}, align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE:%\.offload_baseptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr [[A]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS:%\.offload_ptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr [[A]], ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr [[BASE]], ptr [[PTRS]], ptr @.offload_sizes.preload_twice.release.1, ptr @.offload_maptypes.preload_twice.release.1.end, ptr null, ptr null)
// CHECK-NEXT: call void @llvm.lifetime.end.p0(ptr nonnull %a)
// CHECK-NEXT: ret void

// The unwind path of the second `preload` releases `a`.
// CHECK: landingpad
// CHECK: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr {{%\.offload_baseptrs[0-9]*}}, ptr {{%\.offload_ptrs[0-9]*}}, ptr @.offload_sizes.preload_twice.release.2, ptr @.offload_maptypes.preload_twice.release.2.end, ptr null, ptr null)
// CHECK-NEXT: resume
#[unsafe(no_mangle)]
pub fn preload_twice(xs: &[f32; 16]) {
    let a = preload(xs);
    let b = preload(xs);
    black_box((&a, &b));
}
