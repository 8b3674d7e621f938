//! Registration in the layout of LLVM 20 and later (`--abi=current`): the offload entry is the
//! 56-byte `{ i64 reserved, i16 version, i16 kind, i32 flags, ptr addr, ptr name, i64 size,
//! i64 data, ptr aux }`, version 1 and kind 1 (OpenMP), in the `llvm_offload_entries` section.
//! The image, the descriptor and the constructor (priority 101, `__tgt_register_lib`, then
//! `atexit(.omp_offloading.descriptor_unreg)`) are as in the LLVM 19 layout.
//@ compile-flags: -Copt-level=3
//@ lower-flags: --abi=current --image x86_64-unknown-linux-gnu=auxiliary/fake-image.bin

#![crate_type = "lib"]

use core::hint::black_box;

// CHECK: %struct.__tgt_offload_entry = type { i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }
// CHECK: %struct.__tgt_device_image = type { ptr, ptr, ptr, ptr }
// CHECK: %struct.__tgt_bin_desc = type { i32, ptr, ptr, ptr }

// One entry per launched kernel: its region id and its name in the device image.
// CHECK: @.saxpy.region_id = internal constant i8 0
// CHECK: @.offloading.entry_name.saxpy = internal unnamed_addr constant [6 x i8] c"saxpy\00"
// CHECK-NEXT: @.offloading.entry.saxpy = internal constant %struct.__tgt_offload_entry { i64 0, i16 1, i16 1, i32 0, ptr @.saxpy.region_id, ptr @.offloading.entry_name.saxpy, i64 0, i64 0, ptr null }, section "llvm_offload_entries", align 8
// CHECK-NEXT: @__start_llvm_offload_entries = external hidden global %struct.__tgt_offload_entry
// CHECK-NEXT: @__stop_llvm_offload_entries = external hidden global %struct.__tgt_offload_entry
// CHECK-NEXT: @llvm.used = appending global [1 x ptr] [ptr @.offloading.entry.saxpy], section "llvm.metadata"

// The embedded image (auxiliary/fake-image.bin, 24 bytes), the descriptor, the constructor.
// CHECK-NEXT: @.omp_offloading.device_image = private unnamed_addr constant [24 x i8] c"\7FELF fake offload image\0A", align 4096
// CHECK-NEXT: @.omp_offloading.device_images = private unnamed_addr constant [1 x %struct.__tgt_device_image] [%struct.__tgt_device_image { ptr @.omp_offloading.device_image, ptr getelementptr (i8, ptr @.omp_offloading.device_image, i64 24), ptr @__start_llvm_offload_entries, ptr @__stop_llvm_offload_entries }]
// CHECK-NEXT: @.omp_offloading.descriptor = internal constant %struct.__tgt_bin_desc { i32 1, ptr @.omp_offloading.device_images, ptr @__start_llvm_offload_entries, ptr @__stop_llvm_offload_entries }
// CHECK-NEXT: @llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @.omp_offloading.descriptor_reg, ptr null }]

#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[unsafe(no_mangle)]
pub fn launch(xs: &[f32], ys: &mut [f32]) {
    let _ = black_box(offload::launch!(saxpy, 4096, 256, (2.0f32, xs, ys)));
}

// The runtime's registration entry points.
// CHECK: declare void @__tgt_register_lib(ptr)
// CHECK: declare void @__tgt_unregister_lib(ptr)
// CHECK: declare i32 @atexit(ptr)

// The constructor registers the descriptor, and unregisters it at exit.
// CHECK-LABEL: define internal void @.omp_offloading.descriptor_unreg() {
// CHECK-NEXT: entry:
// CHECK-NEXT: call void @__tgt_unregister_lib(ptr @.omp_offloading.descriptor)
// CHECK-NEXT: ret void
// CHECK-NEXT: }

// CHECK-LABEL: define internal void @.omp_offloading.descriptor_reg() {
// CHECK-NEXT: entry:
// CHECK-NEXT: call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)
// CHECK-NEXT: {{%[0-9]+}} = call i32 @atexit(ptr @.omp_offloading.descriptor_unreg)
// CHECK-NEXT: ret void
// CHECK-NEXT: }
