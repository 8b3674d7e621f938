//! An asynchronous launch in a program without an NVIDIA image (an x86_64 one only): the
//! lowering still defines the three symbols the library reads, as null and 0, so the program
//! links and every `launch_async!` takes the synchronous path (see launch_async.rs for the
//! cubin). A PTX without the cubin it belongs to is not embedded.
//@ compile-flags: -Copt-level=3
//@ lower-flags: --abi=llvm19 --image x86_64-unknown-linux-gnu=auxiliary/fake-image.bin
//@ lower-flags: --cuda-ptx auxiliary/fake-kernels.ptx

#![crate_type = "lib"]

use core::hint::black_box;

use offload::{Preload, PreloadMut};

// CHECK: @__rust_offload_cuda_image = internal local_unnamed_addr constant ptr null
// CHECK-NEXT: @__rust_offload_cuda_image_len = internal local_unnamed_addr constant i64 0
// CHECK-NEXT: @__rust_offload_cuda_ptx = internal local_unnamed_addr constant ptr null
// CHECK-NOT: @.offload_cuda_ptx
// CHECK-NOT: @.offload_maptypes.saxpy.{{(begin|end)}}
// CHECK: @.offload_maptypes.saxpy.kernel = private unnamed_addr constant [6 x i64] [i64 800, i64 800, i64 32, i64 800, i64 32, i64 800]

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
