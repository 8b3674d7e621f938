//! A program that embeds an NVIDIA image lets the library see it and set the GPUs up before the
//! runtime does: the registration constructor first calls `__offload_before_cuda_register` with
//! the embedded cubin and its length (the library records which GPUs can run it, which the
//! runtime numbers first, and activates their primary contexts with the driver's default wait
//! mode, which libomptarget's CUDA plugin then keeps), then registers the images. Here the
//! crate defines the hook itself, as the library does in a whole program. Without the hook, or
//! without an NVIDIA image, the constructor only registers (registration_llvm19.rs). (The
//! runtime's loader, `__offload_load_runtime`, is not the lowering's business: the link stage
//! calls it from its own, earlier constructor.)
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
pub extern "C" fn __offload_before_cuda_register(image: *const u8, len: i64) {
    black_box((image, len));
}

#[unsafe(no_mangle)]
pub fn launch(xs: &[f32], ys: &mut [f32]) {
    let _ = black_box(offload::launch!(saxpy, 4096, 256, (2.0f32, xs, ys)));
}

// Both images register through one descriptor, the NVIDIA one first.
// CHECK: @.omp_offloading.descriptor = internal constant %struct.__tgt_bin_desc { i32 2,

// CHECK-LABEL: define internal void @.omp_offloading.descriptor_reg() {
// CHECK-NEXT: entry:
// CHECK-NEXT: call void @__offload_before_cuda_register(ptr @.omp_offloading.device_image, i64 24)
// CHECK-NEXT: call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)
// CHECK-NEXT: {{%[0-9]+}} = call i32 @atexit(ptr @.omp_offloading.descriptor_unreg)
