//! Loops as nvcc unrolls them. A grid-stride loop, whose trip count LLVM would not compute (a
//! division by the stride), is unrolled by 4 (four loads in flight per thread); a loop of a
//! constant trip count is unrolled whole even where its body is large. (By name, the PTX's
//! order.)

use offload::gpu;

// Eight turns of 64 products: rolled, there would be 64 `fma` and a branch back.
// CHECK-LABEL: .entry constant_loop(
// CHECK-COUNT-512: fma.rn.f32
// CHECK: ret;
#[offload::kernel(fp_contract)]
pub fn constant_loop(a: &[f32; 8], b: &[f32; 8], out: &mut [f32]) {
    let mut acc = [[0.0f32; 8]; 8];
    for k in 0..8 {
        let (x, y) = (a[k] * (k + 1) as f32, b[k] - k as f32);
        for i in 0..8 {
            for j in 0..8 {
                acc[i][j] += x * (i as f32) * y * (j as f32);
            }
        }
    }
    if let Some(o) = out.get_mut(gpu::global_id_x()) {
        *o = acc.iter().flatten().sum();
    }
}

// The remainder loop first (one load a turn), then the unrolled one, which LLVM marks so that
// ptxas does not unroll it again: four loads, then the branch back.
// CHECK-LABEL: .entry grid_stride_sum(
// CHECK: .pragma "nounroll";
// CHECK-NEXT: ld.global.b32
// CHECK-NOT: ld.global
// CHECK: @%p{{[0-9]+}} bra
// CHECK: .pragma "nounroll";
// CHECK-COUNT-4: ld.global.b32
// CHECK-NOT: ld.global
// CHECK: @%p{{[0-9]+}} bra
// CHECK-NOT: ld.global
// CHECK: ret;
#[offload::kernel]
pub fn grid_stride_sum(values: &[f32], sums: &mut [f32]) {
    let mut sum = 0.0;
    let mut i = gpu::global_id_x();
    while i < values.len() {
        sum += values[i];
        i += gpu::global_size_x();
    }
    if let Some(s) = sums.get_mut(gpu::global_id_x()) {
        *s = sum;
    }
}
