//! Data a kernel only reads (`&[T]`, `&T`) is loaded through the read-only data cache
//! (`ld.global.nc`), as nvcc loads a `const T* __restrict__`: the host holds it borrowed shared
//! for the whole launch, so no thread can write it. Data the kernel writes is loaded plainly.

// CHECK-LABEL: .entry saxpy_read_only(
// CHECK-DAG: ld.global.nc.b32
// CHECK-DAG: ld.global.b32
// CHECK: st.global.b32
// CHECK: ret;
#[offload::kernel]
pub fn saxpy_read_only(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < x.len() && i < y.len() {
        y[i] += a * x[i];
    }
}

// A `&T` parameter too: both reads go through the read-only cache.
// CHECK-LABEL: .entry scaled_by(
// CHECK: ld.global.nc.b32
// CHECK: ld.global.nc.b32
// CHECK: st.global.b32
#[offload::kernel]
pub fn scaled_by(factor: &f32, x: &[f32], out: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if let (Some(&v), Some(o)) = (x.get(i), out.get_mut(i)) {
        *o = v * *factor;
    }
}
