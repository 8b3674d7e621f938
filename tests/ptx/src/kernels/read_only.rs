//! A kernel's `&[T]` and `&T` parameters, which nothing writes while it runs, are read through
//! the read-only data cache (`ld.global.nc`): the device stage marks every pointer parameter the
//! kernel only reads `noalias`. A `&mut` parameter's data is read plainly.

// CHECK-LABEL: .entry read_only_saxpy(
// CHECK: ld.global.nc.b32
// CHECK: ld.global.b32
// CHECK: st.global.b32
// CHECK: ret;
#[offload::kernel]
pub fn read_only_saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

// CHECK-LABEL: .entry read_only_value(
// CHECK: ld.global.nc.b64
// CHECK: ret;
#[offload::kernel]
pub fn read_only_value(scale: &f64, out: &mut [f64]) {
    if let Some(o) = out.get_mut(offload::gpu::global_id_x()) {
        *o = *scale;
    }
}
