//! A launch with preloaded arguments: `&x` (a `Preload`) and `&mut y` (a `PreloadMut`) are already
//! on the device, so the launch maps nothing around itself: there is no `.begin`/`.end` table for
//! the kernel and no begin or end mapper between the slots' stores and the library's reading of
//! the status. The kernel map types carry no TO/FROM: TARGET_PARAM (32) for the two pointers,
//! LITERAL|IMPLICIT|TARGET_PARAM (800) for the geometry, `a` and the lengths. The pointer slots
//! hold the host addresses and sizes, which the runtime finds present.
//!
//! Before the runtime's launch, the library is offered it (`launch_sync`, with the embedded
//! cubin, null here): on a CUDA GPU it runs the launch on its own stream and waits, so that a
//! kernel that faults is an `offload::Error`; elsewhere (the host-offload plugin,
//! `OFFLOAD_LAUNCH=runtime`) it declines and `__tgt_target_kernel` launches.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use core::hint::black_box;

use offload::{preload, preload_mut};

// CHECK-NOT: @.offload_maptypes.saxpy.{{(begin|end)}}
// CHECK: @.offload_maptypes.launch_preloaded.preload.0.begin = private unnamed_addr constant [1 x i64] [i64 1]
// CHECK: @.offload_maptypes.launch_preloaded.preload.1.begin = private unnamed_addr constant [1 x i64] [i64 5]
// CHECK-NOT: @.offload_maptypes.saxpy.{{(begin|end)}}
// CHECK: @.offload_maptypes.saxpy.kernel = private unnamed_addr constant [6 x i64] [i64 800, i64 800, i64 32, i64 800, i64 32, i64 800]
// CHECK-NOT: @.offload_maptypes.saxpy.{{(begin|end)}}
// CHECK: @.saxpy.region_id = internal constant i8 0
// CHECK-NOT: @.offload_maptypes.saxpy.{{(begin|end)}}
// The releases (the unwind paths have their own sites): `y`'s copies back, `x`'s does not.
// CHECK-DAG: @.offload_maptypes.launch_preloaded.release.[[Y_RELEASE:[0-9]+]].end = private unnamed_addr constant [1 x i64] [i64 6]
// CHECK-DAG: @.offload_maptypes.launch_preloaded.release.[[X_RELEASE:[0-9]+]].end = private unnamed_addr constant [1 x i64] zeroinitializer
// CHECK-NOT: @.offload_maptypes.saxpy.{{(begin|end)}}
// CHECK: @llvm.global_ctors

#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

// CHECK-LABEL: define void @launch_preloaded(ptr
// CHECK: [[KARGS:%kernel_args[0-9]*]] = alloca %struct.__tgt_kernel_arguments, align 8
// CHECK-NEXT: [[SIZES:%\.offload_sizes[0-9]*]] = alloca [6 x i64], align 8
// CHECK-NEXT: [[PTRS:%\.offload_ptrs[0-9]*]] = alloca [6 x ptr], align 8
// CHECK-NEXT: [[BASE:%\.offload_baseptrs[0-9]*]] = alloca [6 x ptr], align 8
// CHECK: [[X_BYTES:%[0-9]+]] = shl nuw nsw i64 %xs.1, 2

// The two preloads: TO, on their own arrays.
// CHECK: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, {{.*}}, ptr @.offload_maptypes.launch_preloaded.preload.0.begin, ptr null, ptr null)
// CHECK: [[Y_BYTES:%[0-9]+]] = shl nuw nsw i64 %ys.1, 2
// CHECK: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 1, {{.*}}, ptr @.offload_maptypes.launch_preloaded.preload.1.begin, ptr null, ptr null)

// The launch: the geometry (4096 blocks of 256 threads, folded into one slot: 256 << 32 |
// 4096), then the slots; x and y hold their host addresses. The library's offer comes first:
// default device, kernel name of 5 bytes, the geometry (28 bytes: grid and block along x, y
// and z, shared memory), 5 slots.
// CHECK: [[X_LEN:%[^ ]+]] = inttoptr i64 %xs.1 to ptr
// CHECK-NEXT: [[Y_LEN:%[^ ]+]] = inttoptr i64 %ys.1 to ptr
// The NVIDIA image goes as its cubin, length and PTX (24 bytes).
// CHECK: [[IMAGE:%[^ ]+]] = load ptr, ptr @__rust_offload_cuda_image
// CHECK: store ptr [[IMAGE]], ptr [[IMAGE_AT:%[^,]+]],
// CHECK: {{(call|invoke)}} void @{{.*}}launch_sync(ptr {{.*}}, ptr {{.*}}dereferenceable(24) [[IMAGE_AT]], i64 noundef -1, ptr {{.*}}, i64 noundef 5, ptr {{.*}}dereferenceable(28) {{%[^,]+}}, ptr {{.*}}, i64 noundef 5)
// CHECK: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[BASE]], i32 0, i32 0
// CHECK-NEXT: store ptr inttoptr (i64 1099511631872 to ptr), ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[PTRS]], i32 0, i32 0
// CHECK-NEXT: store ptr null, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x i64], ptr [[SIZES]], i32 0, i32 0
// CHECK-NEXT: store i64 8, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[BASE]], i32 0, i32 1
// CHECK-NEXT: store ptr inttoptr (i64 1073741824 to ptr), ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[PTRS]], i32 0, i32 1
// CHECK-NEXT: store ptr null, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x i64], ptr [[SIZES]], i32 0, i32 1
// CHECK-NEXT: store i64 8, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[BASE]], i32 0, i32 2
// CHECK-NEXT: store ptr %xs.0, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[PTRS]], i32 0, i32 2
// CHECK-NEXT: store ptr %xs.0, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x i64], ptr [[SIZES]], i32 0, i32 2
// CHECK-NEXT: store i64 [[X_BYTES]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[BASE]], i32 0, i32 3
// CHECK-NEXT: store ptr [[X_LEN]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[PTRS]], i32 0, i32 3
// CHECK-NEXT: store ptr null, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x i64], ptr [[SIZES]], i32 0, i32 3
// CHECK-NEXT: store i64 8, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[BASE]], i32 0, i32 4
// CHECK-NEXT: store ptr %ys.0, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[PTRS]], i32 0, i32 4
// CHECK-NEXT: store ptr %ys.0, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x i64], ptr [[SIZES]], i32 0, i32 4
// CHECK-NEXT: store i64 [[Y_BYTES]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[BASE]], i32 0, i32 5
// CHECK-NEXT: store ptr [[Y_LEN]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[PTRS]], i32 0, i32 5
// CHECK-NEXT: store ptr null, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x i64], ptr [[SIZES]], i32 0, i32 5
// CHECK-NEXT: store i64 8, ptr [[SLOT]], align 8
// No begin mapper: the kernel arguments follow the slots at once.
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 0
// CHECK-NEXT: store i32 3, ptr [[FIELD]], align 4
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 1
// CHECK-NEXT: store i32 6, ptr [[FIELD]], align 4
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 2
// CHECK-NEXT: store ptr [[BASE]], ptr [[FIELD]], align 8
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 3
// CHECK-NEXT: store ptr [[PTRS]], ptr [[FIELD]], align 8
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 4
// CHECK-NEXT: store ptr [[SIZES]], ptr [[FIELD]], align 8
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 5
// CHECK-NEXT: store ptr @.offload_maptypes.saxpy.kernel, ptr [[FIELD]], align 8
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 6
// CHECK-NEXT: store ptr null, ptr [[FIELD]], align 8
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 7
// CHECK-NEXT: store ptr null, ptr [[FIELD]], align 8
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 8
// CHECK-NEXT: store i64 0, ptr [[FIELD]], align 8
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 9
// CHECK-NEXT: store i64 0, ptr [[FIELD]], align 8
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 12
// CHECK-NEXT: store i32 0, ptr [[FIELD]], align 4
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 10
// CHECK-NEXT: store [3 x i32] [i32 4096, i32 1, i32 1], ptr [[FIELD]], align 4
// CHECK-NEXT: [[FIELD:%[0-9]+]] = getelementptr inbounds nuw %struct.__tgt_kernel_arguments, ptr [[KARGS]], i32 0, i32 11
// CHECK-NEXT: store [3 x i32] [i32 256, i32 1, i32 1], ptr [[FIELD]], align 4
// CHECK-NEXT: [[RC:%[0-9]+]] = call i32 @__tgt_target_kernel(ptr @.offload.loc, i64 -1, i32 4096, i32 256, ptr @.saxpy.region_id, ptr [[KARGS]])
// No end mapper: the library reads the status at once.
// CHECK-NEXT: {{%[0-9]+}} = icmp eq i32 [[RC]], 0

// The guards are dropped: `y` comes back (FROM), `x` is released.
// CHECK: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, {{.*}}, ptr @.offload_maptypes.launch_preloaded.release.[[Y_RELEASE]].end, ptr null, ptr null)
// CHECK: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 1, {{.*}}, ptr @.offload_maptypes.launch_preloaded.release.{{[0-9]+}}.end, ptr null, ptr null)
// CHECK: ret void
#[unsafe(no_mangle)]
pub fn launch_preloaded(xs: &[f32], ys: &mut [f32]) {
    let x = preload(xs);
    let mut y = preload_mut(ys);
    let _ = black_box(offload::launch!(saxpy, 4096, 256, (2.0f32, &x, &mut y)));
}
