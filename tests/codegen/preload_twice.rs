//! Two `preload`s of the same data: two begin mappers (TO) and, when the guards drop in reverse
//! order, two end mappers, each behind the library's record of the mappings, which at run time
//! counts the second preload and its release instead of calling them. Neither end mapper copies back:
//! no map type of this function has FROM. Each end mapper comes after the check for kernels that
//! `launch_async!` may have queued (one atomic load; the wait itself is out of line). (The first
//! guard's drop glue, out of line, releases it on the unwind path of the second `preload`, which
//! panics when the mapping fails.)
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
// CHECK-NOT: @.offload_maptypes.preload_twice

// The guards' drop glue, which releases `a` on the unwind path of the second `preload`.
// CHECK: define internal {{.*}}drop_glue{{.*}}preload_twice(ptr
// CHECK: call void @__tgt_target_data_end_mapper(

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

// `b` then `a` are dropped: two releases of the same data, each asking the library's record
// first (at run time the first is only counted), then the end mapper.
// CHECK: {{call|invoke}} void @{{.*}}6ranges7release(
// CHECK: load atomic i8, ptr @{{.*}}ANY_LAUNCHED{{.*}} acquire
// CHECK: {{call|invoke}} void @{{.*}}synchronize_device_or_exit(i64
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE:%\.offload_baseptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr [[B:%[^,]+]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS:%\.offload_ptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr [[B]], ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr [[BASE]], ptr [[PTRS]], ptr @.offload_sizes.preload_twice.release.0, ptr @.offload_maptypes.preload_twice.release.0.end, ptr null, ptr null)
// CHECK-NEXT: {{call|invoke}} void @{{.*}}6ranges6settle(
// CHECK: call void @llvm.lifetime.end.p0(ptr nonnull %b)
// CHECK: {{call|invoke}} void @{{.*}}6ranges7release(
// CHECK: load atomic i8, ptr @{{.*}}ANY_LAUNCHED{{.*}} acquire
// CHECK: {{call|invoke}} void @{{.*}}synchronize_device_or_exit(i64
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[BASE:%\.offload_baseptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr [[A:%[^,]+]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [1 x ptr], ptr [[PTRS:%\.offload_ptrs[0-9]*]], i32 0, i32 0
// CHECK-NEXT: store ptr [[A]], ptr [[SLOT]], align 8
// CHECK-NEXT: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, ptr [[BASE]], ptr [[PTRS]], ptr @.offload_sizes.preload_twice.release.1, ptr @.offload_maptypes.preload_twice.release.1.end, ptr null, ptr null)
// CHECK-NEXT: {{call|invoke}} void @{{.*}}6ranges6settle(
// CHECK: call void @llvm.lifetime.end.p0(ptr nonnull %a)
// CHECK-NEXT: ret void
#[unsafe(no_mangle)]
pub fn preload_twice(xs: &[f32; 16]) {
    let a = preload(xs);
    let b = preload(xs);
    black_box((&a, &b));
}
