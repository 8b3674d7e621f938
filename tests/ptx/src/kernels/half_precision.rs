//! `offload::bf16` and `offload::f16` in kernels are the hardware's: conversions from `f32`
//! round to nearest even in one `cvt.rn`, widening to `f32` is exact, and the arithmetic is
//! the 16-bit instructions (sm_90 has bf16 `add`, `sub` and `mul`), not a software emulation.

use offload::{bf16, f16};

// CHECK-LABEL: .entry bf16_ops(
// CHECK: cvt.rn.bf16.f32
// CHECK: fma.rn.bf16
// CHECK: add.rn.bf16
// CHECK: mul.rn.bf16
// CHECK: sub.rn.bf16
// CHECK: ret;
#[offload::kernel]
pub fn bf16_ops(x: &[f32], y: &mut [bf16]) {
    let i = offload::gpu::global_id_x();
    if let (Some(&x), Some(y)) = (x.get(i), y.get_mut(i)) {
        let a = bf16::from_f32(x);
        let b = a.mul_add(a, *y);
        *y = (b + a) * a - b;
    }
}

// CHECK-LABEL: .entry f16_ops(
// CHECK: cvt.f32.f16
// CHECK: cvt.rn.f16.f32
// CHECK: fma.rn.f16
// CHECK: add.rn.f16
// CHECK: ret;
#[offload::kernel]
pub fn f16_ops(x: &[f16], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if let (Some(&x), Some(y)) = (x.get(i), y.get_mut(i)) {
        let a = x.to_f32();
        let b = f16::from_f32(a * 2.0);
        *y = (b.mul_add(x, x) + b).to_f32();
    }
}
