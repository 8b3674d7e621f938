//! A generic kernel's instances are entry points of their own in the NVIDIA image, each
//! compiled at its arguments: `scale__f32` multiplies in single precision, `scale__f64` in
//! double, and the const parameter of `sum_tile` is the instance's trip count, unrolled whole.
//! (By name, the PTX's order.)

use offload::DeviceCopy;

// CHECK-LABEL: .visible .entry scale__f32(
// CHECK: mul.rn.f32
// CHECK-NOT: .f64
// CHECK: ret;
// CHECK-LABEL: .visible .entry scale__f64(
// CHECK: mul.rn.f64
// CHECK: ret;
#[offload::kernel(instances(f32, f64))]
pub fn scale<T: DeviceCopy + Copy + core::ops::Mul<Output = T>>(a: T, y: &mut [T]) {
    if let Some(y) = y.get_mut(offload::gpu::global_id_x()) {
        *y = a * *y;
    }
}

// CHECK-LABEL: .visible .entry sum_tile__4(
// CHECK-COUNT-4: ld.global.b32
// CHECK-NOT: bra
// CHECK: ret;
#[offload::kernel(instances(4))]
pub fn sum_tile<const TILE: usize>(values: &[u32; TILE], sum: &mut u32) {
    let mut total = 0u32;
    for v in values {
        total = total.wrapping_add(*v);
    }
    *sum = total;
}
