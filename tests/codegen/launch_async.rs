//! An asynchronous launch: the library reads the embedded cubin through
//! `__rust_offload_cuda_image` and `__rust_offload_cuda_image_len`, which the lowering defines
//! from the `nvptx64-nvidia-cuda` image (here auxiliary/fake-image.bin, 24 bytes), pointing at
//! the same embedded copy that the `__tgt_device_image` registers, and its PTX through
//! `__rust_offload_cuda_ptx` (auxiliary/fake-kernels.ptx, 130 bytes, embedded NUL-terminated
//! and not registered). The synchronous fallback is an ordinary launch of present arguments: no
//! begin or end mapper.
//@ compile-flags: -Copt-level=3
//@ lower-flags: --abi=llvm19 --image nvptx64-nvidia-cuda=auxiliary/fake-image.bin
//@ lower-flags: --cuda-ptx auxiliary/fake-kernels.ptx

#![crate_type = "lib"]

use core::hint::black_box;

use offload::{Preload, PreloadMut};

// CHECK: @__rust_offload_cuda_image = internal local_unnamed_addr constant ptr @.omp_offloading.device_image
// CHECK-NEXT: @__rust_offload_cuda_image_len = internal local_unnamed_addr constant i64 24
// CHECK-NEXT: @__rust_offload_cuda_ptx = internal local_unnamed_addr constant ptr @.offload_cuda_ptx
// CHECK-NOT: @.offload_maptypes.saxpy.{{(begin|end)}}
// CHECK: @.offload_maptypes.saxpy.kernel = private unnamed_addr constant [6 x i64] [i64 800, i64 800, i64 32, i64 800, i64 32, i64 800]
// CHECK: @.omp_offloading.device_image = private unnamed_addr constant [24 x i8] c"\7FELF fake offload image\0A", align 4096
// CHECK-NOT: @.offload_cuda_ptx
// CHECK: @.omp_offloading.device_images = private unnamed_addr constant [1 x %struct.__tgt_device_image] [%struct.__tgt_device_image { ptr @.omp_offloading.device_image, ptr getelementptr (i8, ptr @.omp_offloading.device_image, i64 24),
// CHECK: @.offload_cuda_ptx = private unnamed_addr constant [131 x i8] c"//\0A// A stand-in for the PTX of the kernels of the codegen tests.\0A//\0A.version 7.8\0A.target sm_90\0A.visible .entry saxpy()\0A{\0A\09ret;\0A}\0A\00"

#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

#[unsafe(no_mangle)]
pub fn launch(x: &Preload<[f32]>, y: &mut PreloadMut<[f32]>) {
    let _ = black_box(offload::launch_async!(saxpy, 4096, 256, (2.0f32, x, y)));
}

// CHECK-LABEL: define void @launch(
// CHECK: load ptr, ptr @__rust_offload_cuda_image
// CHECK: load i64, ptr @__rust_offload_cuda_image_len
// CHECK: load ptr, ptr @__rust_offload_cuda_ptx
// CHECK: call {{.*}}launch_async
// CHECK-NOT: call void @__tgt_target_data_begin_mapper
// CHECK: call i32 @__tgt_target_kernel(
// CHECK-NOT: call void @__tgt_target_data_end_mapper
// CHECK: ret void
