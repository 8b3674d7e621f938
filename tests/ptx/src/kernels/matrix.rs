//! A matrix product through `offload::gpu::Matrix` views checks the row and the column once,
//! and nothing in its loop: `k < n`, the length of both.

use offload::gpu::{self, Matrix};

// The loop, unrolled by 4: loads and products with no comparison between them.
// CHECK-LABEL: .entry matrix_product(
// CHECK: ld.global.b32
// CHECK-NEXT: ld.global.b32
// CHECK-NEXT: fma.rn.f32
// CHECK-NOT: setp
// CHECK: fma.rn.f32
// CHECK-NOT: setp
// CHECK: fma.rn.f32
// CHECK-NOT: setp
// CHECK: fma.rn.f32
// CHECK: setp
#[offload::kernel(fp_contract)]
pub fn matrix_product(n: u32, a: &[f32], b: &[f32], c: &mut [f32]) {
    let n = n as usize;
    let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
    let (col, row) = (gpu::global_id_x(), gpu::global_id_y());
    if row < n && col < n {
        let (a_row, b_col) = (a.row(row), b.column(col));
        let mut acc = 0.0;
        for k in 0..n {
            acc += a_row[k] * b_col[k];
        }
        c[row * n + col] = acc;
    }
}
