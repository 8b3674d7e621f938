//! A `Preload` is read-only on the device: passing `&Preload` to a kernel's `&mut [f32]`
//! parameter does not compile (a `&mut PreloadMut` is needed).
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

use offload::preload;

#[offload::kernel]
pub fn scale(a: f32, y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] *= a;
    }
}

fn main() {
    let ys = vec![1.0f32; 1024];
    let y = preload(&ys[..]);
    let _ = offload::launch!(scale, 4, 256, (2.0f32, &y)); //~ ERROR cannot be passed to a kernel parameter of this type
}
