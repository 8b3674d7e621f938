//! The registration constructor calls the library's hooks before it registers the images: first
//! `__offload_load_runtime` (the library loads libomptarget itself, so that a missing runtime is
//! a message naming the package), then, for a program that embeds an NVIDIA image,
//! `__offload_before_cuda_register` (it activates each GPU's primary context with the driver's
//! default wait mode, which libomptarget's CUDA plugin then keeps). Here the crate defines the
//! hooks itself, as the library does in a whole program. Where the module defines neither, the
//! constructor only registers (registration_llvm19.rs).
//@ compile-flags: -Copt-level=3
//@ lower-flags: --abi=llvm19 --image nvptx64-nvidia-cuda=auxiliary/fake-image.bin --image x86_64-unknown-linux-gnu=auxiliary/fake-image.bin

#![crate_type = "lib"]

use core::hint::black_box;

#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn __offload_load_runtime() {
    black_box(1u8);
}

#[unsafe(no_mangle)]
pub extern "C" fn __offload_before_cuda_register() {
    black_box(2u8);
}

#[unsafe(no_mangle)]
pub fn launch(xs: &[f32], ys: &mut [f32]) {
    let _ = black_box(offload::launch!(saxpy, 4096, 256, (2.0f32, xs, ys)));
}

// Both images register through one descriptor, the NVIDIA one first.
// CHECK: @.omp_offloading.descriptor = internal constant %struct.__tgt_bin_desc { i32 2,

// CHECK-LABEL: define internal void @.omp_offloading.descriptor_reg() {
// CHECK-NEXT: entry:
// CHECK-NEXT: call void @__offload_load_runtime()
// CHECK-NEXT: call void @__offload_before_cuda_register()
// CHECK-NEXT: call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)
// CHECK-NEXT: {{%[0-9]+}} = call i32 @atexit(ptr @.omp_offloading.descriptor_unreg)
