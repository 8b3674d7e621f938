//! A generic kernel: each instance `instances(..)` lists is an entry point of its own symbol
//! (`axpy__f32`, `axpy__f64`, `scale__4`), and each instance a program launches gets its own
//! region id, offload entry and map types, launched with `__tgt_target_kernel` on that region.
//! The kernel's bounds, its instances and a const parameter are all the macro needs.
//@ compile-flags: -Copt-level=3
//@ lower-flags: --abi=current --image x86_64-unknown-linux-gnu=auxiliary/fake-image.bin

#![crate_type = "lib"]

use core::hint::black_box;
use core::ops::{Add, Mul};

use offload::DeviceCopy;

// CHECK-DAG: @.axpy__f32.region_id = internal constant i8 0
// CHECK-DAG: @.axpy__f64.region_id = internal constant i8 0
// CHECK-DAG: @.scale__4.region_id = internal constant i8 0
// CHECK-DAG: @.offloading.entry_name.axpy__f32 = internal unnamed_addr constant [10 x i8] c"axpy__f32\00"
// CHECK-DAG: @.offloading.entry_name.axpy__f64 = internal unnamed_addr constant [10 x i8] c"axpy__f64\00"
// CHECK-DAG: @.offloading.entry_name.scale__4 = internal unnamed_addr constant [9 x i8] c"scale__4\00"
// CHECK-DAG: @.offloading.entry.axpy__f32 = internal constant %struct.__tgt_offload_entry { i64 0, i16 1, i16 1, i32 0, ptr @.axpy__f32.region_id, ptr @.offloading.entry_name.axpy__f32, i64 0, i64 0, ptr null }, section "llvm_offload_entries", align 8
// CHECK-DAG: @.offloading.entry.axpy__f64 = internal constant %struct.__tgt_offload_entry { i64 0, i16 1, i16 1, i32 0, ptr @.axpy__f64.region_id, ptr @.offloading.entry_name.axpy__f64, i64 0, i64 0, ptr null }, section "llvm_offload_entries", align 8
// CHECK-DAG: @.offloading.entry.scale__4 = internal constant %struct.__tgt_offload_entry { i64 0, i16 1, i16 1, i32 0, ptr @.scale__4.region_id, ptr @.offloading.entry_name.scale__4, i64 0, i64 0, ptr null }, section "llvm_offload_entries", align 8
// The f64 instance listed but not launched here has no entry: `scale__2` is not registered.
// CHECK-NOT: scale__2.region_id

#[offload::kernel(instances(f32, f64))]
pub fn axpy<T: DeviceCopy + Copy + Mul<Output = T> + Add<Output = T>>(a: T, x: &[T], y: &mut [T]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[offload::kernel(instances(2, 4))]
pub fn scale<const FACTOR: u32>(y: &mut [u32]) {
    if let Some(y) = y.get_mut(offload::gpu::global_id_x()) {
        *y *= FACTOR;
    }
}

// CHECK-LABEL: define void @launch_instances(
// CHECK: call i32 @__tgt_target_kernel(ptr @.offload.loc, i64 -1, i32 4, i32 256, ptr @.axpy__f32.region_id,
// CHECK: call i32 @__tgt_target_kernel(ptr @.offload.loc, i64 -1, i32 4, i32 256, ptr @.axpy__f64.region_id,
// CHECK: call i32 @__tgt_target_kernel(ptr @.offload.loc, i64 -1, i32 4, i32 256, ptr @.scale__4.region_id,
#[unsafe(no_mangle)]
pub fn launch_instances(x32: &[f32], y32: &mut [f32], x64: &[f64], y64: &mut [f64], n: &mut [u32]) {
    let _ = black_box(offload::launch!(axpy::<f32>, 4, 256, (2.0f32, x32, y32)));
    let _ = black_box(offload::launch!(axpy::<f64>, 4, 256, (2.0f64, x64, y64)));
    let _ = black_box(offload::launch!(scale::<4>, 4, 256, (n,)));
}
