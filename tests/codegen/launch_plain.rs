//! A launch with plain arguments: `&[f32]` and `&mut [f32]` are mapped around this one launch,
//! split as upstream does into `begin_mapper(.begin) -> __tgt_target_kernel(.kernel) ->
//! end_mapper(.end)`, all over the same argument arrays. Slots: the hidden geometry, `a`, `x`
//! and its length, `y` and its length.
//!
//! - `&mut [f32]`: begin TO|ALWAYS (5), kernel TARGET_PARAM (32), end FROM|ALWAYS (6);
//! - `&[f32]`: begin TO|ALWAYS (5), kernel TARGET_PARAM (32), end 0;
//! - scalars and lengths: LITERAL|IMPLICIT (768) around, LITERAL|IMPLICIT|TARGET_PARAM (800) in the
//!   kernel; their value is the base pointer and their `ArgPtrs` slot is null.
//!
//! The sizes of the mapped slots are the ones the library's check leaves (`Slot::map`): the
//! data's bytes, or 0 for `&T` arguments that overlap each other, which the library maps as one
//! range before the launch. The kernel arguments are `__tgt_kernel_arguments` version 3,
//! launched on `.saxpy.region_id`.
//@ compile-flags: -Copt-level=3

#![crate_type = "lib"]

use core::hint::black_box;

// CHECK: %struct.__tgt_kernel_arguments = type { i32, i32, ptr, ptr, ptr, ptr, ptr, ptr, i64, i64, [3 x i32], [3 x i32], i32 }

// CHECK: @.offload_maptypes.saxpy.kernel = private unnamed_addr constant [6 x i64] [i64 800, i64 800, i64 32, i64 800, i64 32, i64 800]
// CHECK: @.offload_maptypes.saxpy.begin = private unnamed_addr constant [6 x i64] [i64 768, i64 768, i64 5, i64 768, i64 5, i64 768]
// CHECK: @.offload_maptypes.saxpy.end = private unnamed_addr constant [6 x i64] [i64 768, i64 768, i64 0, i64 768, i64 6, i64 768]
// CHECK: @.saxpy.region_id = internal constant i8 0

#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

// CHECK-LABEL: define void @launch_plain(ptr
// CHECK-NEXT: {{[a-z0-9_.]+}}:
// CHECK-NEXT: [[KARGS:%kernel_args[0-9]*]] = alloca %struct.__tgt_kernel_arguments, align 8
// CHECK-NEXT: [[SIZES:%\.offload_sizes[0-9]*]] = alloca [6 x i64], align 8
// CHECK-NEXT: [[PTRS:%\.offload_ptrs[0-9]*]] = alloca [6 x ptr], align 8
// CHECK-NEXT: [[BASE:%\.offload_baseptrs[0-9]*]] = alloca [6 x ptr], align 8

// The geometry the library checked (4096 blocks of 256 threads: 256 << 32 | 4096), and the
// slots' values.
// CHECK: [[X_BYTES:%[0-9]+]] = shl nuw nsw i64 %xs.1, 2
// CHECK-NEXT: [[X_LEN:%[^ ]+]] = inttoptr i64 %xs.1 to ptr
// CHECK-NEXT: [[Y_BYTES:%[0-9]+]] = shl nuw nsw i64 %ys.1, 2
// CHECK-NEXT: [[Y_LEN:%[^ ]+]] = inttoptr i64 %ys.1 to ptr

// The slots the library checks (40 bytes each: kind, value, size, the bytes the mappers map,
// `Slot::map`, the size until the library maps the data itself, and the device address a
// guard found, `Slot::mapped`): `x` is the second slot, `y` the fourth.
// CHECK: [[X_MAP_AT:%[^ ]+]] = getelementptr inbounds nuw i8, ptr [[SLOTS:%[^,]+]], i64 64
// CHECK-NEXT: store i64 [[X_BYTES]], ptr [[X_MAP_AT]], align 8
// CHECK: [[Y_MAP_AT:%[^ ]+]] = getelementptr inbounds nuw i8, ptr [[SLOTS]], i64 144
// CHECK-NEXT: store i64 [[Y_BYTES]], ptr [[Y_MAP_AT]], align 8

// Before the runtime sees them, the library checks the mapped ranges among the five argument
// slots of `saxpy` (no partial overlap with preloaded data, room on the device), and maps any
// `&T` arguments that overlap each other as one range (then their `map` is 0, and the
// launch's mappers find them inside it); values and present data are not checked.
// CHECK: call void @{{.*}}check_mapped_slots{{.*}}(ptr {{.*}}, ptr {{.*}}, i64 noundef 5, i64 noundef -1, ptr {{.*}}[[SLOTS]], i64 noundef 5)

// The library is offered the launch first (on a CUDA GPU it maps the plain arguments with the
// runtime's begin mapper, runs the kernel on its stream and waits, then releases them, so that
// a kernel that faults is an `offload::Error`; the geometry goes as 28 bytes: grid and block
// along x, y and z, and shared memory); elsewhere it declines, and the lowered sequence below
// runs, the geometry folded into constants.
// The NVIDIA image goes as its cubin, length and PTX (24 bytes).
// CHECK: [[IMAGE:%[^ ]+]] = load ptr, ptr @__rust_offload_cuda_image
// CHECK: store ptr [[IMAGE]], ptr [[IMAGE_AT:%[^,]+]],
// CHECK: {{(call|invoke)}} void @{{.*}}launch_sync(ptr {{.*}}, ptr {{.*}}dereferenceable(24) [[IMAGE_AT]], i64 noundef -1, ptr {{.*}}, i64 noundef 5, ptr {{.*}}dereferenceable(28) {{%[^,]+}}, ptr {{.*}}[[SLOTS]], i64 noundef 5)

// The sizes of the mapped slots are what the library left in `map`; the others stay constants.
// CHECK: [[X_MAP:%[0-9]+]] = load i64, ptr [[X_MAP_AT]], align 8
// CHECK-NEXT: [[Y_MAP:%[0-9]+]] = load i64, ptr [[Y_MAP_AT]], align 8

// 1. the argument arrays
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
// CHECK-NEXT: store i64 [[X_MAP]], ptr [[SLOT]], align 8
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
// CHECK-NEXT: store i64 [[Y_MAP]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[BASE]], i32 0, i32 5
// CHECK-NEXT: store ptr [[Y_LEN]], ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x ptr], ptr [[PTRS]], i32 0, i32 5
// CHECK-NEXT: store ptr null, ptr [[SLOT]], align 8
// CHECK-NEXT: [[SLOT:%[0-9]+]] = getelementptr inbounds [6 x i64], ptr [[SIZES]], i32 0, i32 5
// CHECK-NEXT: store i64 8, ptr [[SLOT]], align 8
// 2. copy-in
// CHECK-NEXT: call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 -1, i32 6, ptr [[BASE]], ptr [[PTRS]], ptr [[SIZES]], ptr @.offload_maptypes.saxpy.begin, ptr null, ptr null)
// 3. the kernel arguments and the launch
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
// 4. copy-out, then the library reads the status
// CHECK-NEXT: call void @__tgt_target_data_end_mapper(ptr @.offload.loc, i64 {{-1|%[^,]+}}, i32 6, ptr [[BASE]], ptr [[PTRS]], ptr [[SIZES]], ptr @.offload_maptypes.saxpy.end, ptr null, ptr null)
// CHECK-NEXT: {{%[0-9]+}} = icmp eq i32 [[RC]], 0
#[unsafe(no_mangle)]
pub fn launch_plain(xs: &[f32], ys: &mut [f32]) {
    let _ = black_box(offload::launch!(saxpy, 4096, 256, (2.0f32, xs, ys)));
}

// CHECK-NOT: __rust_offload_
// CHECK: declare i32 @__tgt_target_kernel(ptr, i64, i32, i32, ptr, ptr)
