//! A program compiled unit by unit that does not hold the library's loader (here, a crate that
//! only launches; a program linking the offload library holds it): the glue's
//! `<name>.offload_rt` forward to the runtime functions themselves, which the dynamic loader
//! binds, and the registration calls the runtime directly. A unit's object is the same either
//! way, so it can be kept between links whatever the rest of the program holds.
//@ compile-flags: -Copt-level=3
//@ lower-flags: --split --image x86_64-unknown-linux-gnu=auxiliary/fake-image.bin

#![crate_type = "lib"]

use core::hint::black_box;

// CHECK-NOT: @.offload_rt.table
// CHECK: @__offload_region_id.saxpy = hidden constant i8 0
// CHECK-NOT: @.offload_rt.table

#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[unsafe(no_mangle)]
pub fn launch_plain(xs: &[f32], ys: &mut [f32]) {
    let _ = black_box(offload::launch!(saxpy, 4096, 256, (2.0f32, xs, ys)));
}

// CHECK-LABEL: define void @launch_plain(
// CHECK: call void @__tgt_target_data_begin_mapper.offload_rt(
// CHECK: call i32 @__tgt_target_kernel.offload_rt(ptr @.offload.loc, i64 {{.*}}, ptr @__offload_region_id.saxpy, ptr %kernel_args)
// CHECK: call void @__tgt_target_data_end_mapper.offload_rt(

// CHECK-LABEL: define internal void @.omp_offloading.descriptor_reg() {
// CHECK-NEXT: entry:
// CHECK-NEXT: call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)

// CHECK-LABEL: define hidden void @__tgt_target_data_begin_mapper.offload_rt(ptr %0, i64 %1, i32 %2, ptr %3, ptr %4, ptr %5, ptr %6, ptr %7, ptr %8) {
// CHECK-NEXT: entry:
// CHECK-NEXT: tail call void @__tgt_target_data_begin_mapper(ptr %0, i64 %1, i32 %2, ptr %3, ptr %4, ptr %5, ptr %6, ptr %7, ptr %8)
// CHECK-NEXT: ret void

// CHECK-LABEL: define hidden i32 @__tgt_target_kernel.offload_rt(ptr %0, i64 %1, i32 %2, i32 %3, ptr %4, ptr %5) {
// CHECK-NEXT: entry:
// CHECK-NEXT: %6 = tail call i32 @__tgt_target_kernel(ptr %0, i64 %1, i32 %2, i32 %3, ptr %4, ptr %5)
// CHECK-NEXT: ret i32 %6
