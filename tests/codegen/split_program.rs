//! A program compiled unit by unit, as offload-ld compiles it (`--split`: the unit, then the
//! program's glue linked into it to read them together). The unit refers to what the glue
//! defines through hidden symbols: the kernel's region id (`__offload_region_id.<k>`: a symbol
//! of the object file, which `.<k>.region_id` cannot always be), the embedded cubin and its PTX, and each
//! runtime function as `<name>.offload_rt`. The glue defines them: the region id beside its
//! offload entry, the cubin from the `nvptx64-nvidia-cuda` image (and its PTX), and the runtime functions as
//! trampolines through the table that the library's loader (`__offload_load_runtime`, defined
//! here as the library defines it) fills in a constructor of priority 100, before the
//! registration's (101), which calls the library's hook and registers through the table too.
//@ compile-flags: -Copt-level=3
//@ lower-flags: --split --image nvptx64-nvidia-cuda=auxiliary/fake-image.bin
//@ lower-flags: --cuda-ptx auxiliary/fake-kernels.ptx

#![crate_type = "lib"]

use core::hint::black_box;

use offload::{Preload, PreloadMut};

// CHECK: @llvm.global_ctors = appending global [2 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @.omp_offloading.descriptor_reg, ptr null }, { i32, ptr, ptr } { i32 100, ptr @.offload_rt.load, ptr null }]
// CHECK: @__offload_region_id.saxpy = hidden constant i8 0
// CHECK: @.offloading.entry.saxpy = internal constant %struct.__tgt_offload_entry{{[.0-9]*}} { ptr @__offload_region_id.saxpy, ptr @.offloading.entry_name.saxpy, i64 0, i32 0, i32 0 }, section "omp_offloading_entries"
// CHECK: @__rust_offload_cuda_image = hidden constant ptr @.omp_offloading.device_image
// CHECK-NEXT: @__rust_offload_cuda_image_len = hidden constant i64 24
// CHECK-NEXT: @.offload_cuda_ptx = private unnamed_addr constant [131 x i8] c"//\0A// A stand-in for the PTX{{.*}}\00"
// CHECK-NEXT: @__rust_offload_cuda_ptx = hidden constant ptr @.offload_cuda_ptx
// CHECK: @.offload_rt.names = private unnamed_addr constant [4 x ptr]
// The table fills whole pages of its own, which the loader makes read-only once it is filled.
// CHECK: @.offload_rt.table = internal global [512 x ptr] zeroinitializer, align 4096

#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __offload_load_runtime(names: *const u8, table: *mut u8, n: i64, bytes: i64) {
    black_box((names, table, n, bytes));
}

#[unsafe(no_mangle)]
pub extern "C" fn __offload_before_cuda_register(image: *const u8, len: i64) {
    black_box((image, len));
}

#[unsafe(no_mangle)]
pub fn launch(x: &Preload<[f32]>, y: &mut PreloadMut<[f32]>) {
    let _ = black_box(offload::launch_async!(saxpy, 4096, 256, (2.0f32, x, y)));
}

// The unit: its runtime calls name the glue's trampolines.
// CHECK-LABEL: define void @launch(
// CHECK: load ptr, ptr @__rust_offload_cuda_image
// CHECK: call i32 @__tgt_target_kernel.offload_rt(ptr @.offload.loc, i64 {{.*}}, ptr @__offload_region_id.saxpy, ptr %kernel_args)
// CHECK-NOT: call i32 @__tgt_target_kernel(

// The glue: registration (the hook first), the loader's constructor, the trampolines.
// CHECK-LABEL: define internal void @.omp_offloading.descriptor_reg() {
// CHECK-NEXT: entry:
// CHECK-NEXT: call void @__offload_before_cuda_register(ptr @.omp_offloading.device_image, i64 24)
// CHECK-NEXT: call void @__tgt_register_lib.offload_rt(ptr @.omp_offloading.descriptor)

// CHECK-LABEL: define internal void @.offload_rt.load() {
// CHECK-NEXT: entry:
// CHECK-NEXT: call void @__offload_load_runtime(ptr @.offload_rt.names, ptr @.offload_rt.table, i64 4, i64 4096)

// CHECK-LABEL: define hidden void @__tgt_register_lib.offload_rt(ptr %0) {
// CHECK-NEXT: entry:
// CHECK-NEXT: %f = load ptr, ptr {{.*}}@.offload_rt.table
// CHECK-NEXT: tail call void %f(ptr %0)

// CHECK-LABEL: define hidden i32 @__tgt_target_kernel.offload_rt(ptr %0, i64 %1, i32 %2, i32 %3, ptr %4, ptr %5) {
// CHECK-NEXT: entry:
// CHECK-NEXT: %f = load ptr, ptr {{.*}}@.offload_rt.table
// CHECK-NEXT: %6 = tail call i32 %f(ptr %0, i64 %1, i32 %2, i32 %3, ptr %4, ptr %5)
// CHECK-NEXT: ret i32 %6

// The library's own runtime calls go through the table too.
// CHECK-LABEL: define hidden i32 @omp_get_default_device.offload_rt() {

// Nothing of the runtime is left for the dynamic loader.
// CHECK-NOT: declare {{.*}}@__tgt_
// CHECK-NOT: declare {{.*}}@omp_
