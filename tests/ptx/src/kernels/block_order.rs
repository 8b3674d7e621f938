//! `gpu::block_idx_grouped` reorders the grid in 32-bit arithmetic: a 64-bit division there
//! made a DGEMM's address arithmetic 64-bit as well (162 registers a thread against 128).

use offload::gpu;

// Two divisions (the group, the place in it), 32-bit, and none of 64 bits.
// CHECK-LABEL: .entry grouped_place(
// CHECK-NOT: {{(div|rem)}}.{{[us]}}64
// CHECK: div.u32
// CHECK-NOT: {{(div|rem)}}.{{[us]}}64
// CHECK: div.u32
// CHECK-NOT: {{(div|rem)}}.{{[us]}}64
// CHECK: ret;
#[offload::kernel]
pub fn grouped_place(places: &mut [u32]) {
    let (y, x) = gpu::block_idx_grouped(8);
    let place = y * gpu::grid_dim_x() + x;
    places[place] = place as u32;
}
