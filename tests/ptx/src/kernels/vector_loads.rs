//! `offload::gpu::read_array` reads four `f32`s of a slice in one 16-byte load where they are
//! aligned for it (the address is tested as the kernel runs: the aligned path is one `ld.v4`,
//! the other four plain loads), as CUDA's `float4` loads do.

use offload::gpu;

// CHECK-LABEL: .entry vector_sums(
// CHECK-DAG: ld.v4.b32
// CHECK-DAG: ld.global.b32
// CHECK: ret;
#[offload::kernel]
pub fn vector_sums(x: &[f32], sums: &mut [f32]) {
    let i = gpu::global_id_x();
    if let (Some(part), Some(sum)) = (x.get(4 * i..), sums.get_mut(i)) {
        let [a, b, c, d]: [f32; 4] = gpu::read_array(part);
        *sum = a + b + c + d;
    }
}
