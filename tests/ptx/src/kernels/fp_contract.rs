//! `#[offload::kernel(fp_contract)]` lets `a * b + c` be one fused multiply-add (`fma.rn`, one
//! rounding); a kernel without it rounds the product and the sum apart, as IEEE arithmetic and
//! the host-offload image do.

// CHECK-LABEL: .entry contracted(
// CHECK: fma.rn.f32
// CHECK-NOT: mul.rn.f32
// CHECK: ret;
#[offload::kernel(fp_contract)]
pub fn contracted(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

// CHECK-LABEL: .entry not_contracted(
// CHECK: mul.rn.f32
// CHECK: add.rn.f32
// CHECK-NOT: fma.rn.f32
// CHECK: ret;
#[offload::kernel]
pub fn not_contracted(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}
