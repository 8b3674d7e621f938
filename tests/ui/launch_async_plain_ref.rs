//! `launch_async!` takes present data and scalars only: a plain `&mut ys[..]` is mapped around
//! one launch, which an asynchronous kernel would outlive, so it does not compile.
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

#[offload::kernel]
pub fn scale(a: f32, y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] *= a;
    }
}

fn main() {
    let mut ys = vec![1.0f32; 1024];
    let _ = offload::launch_async!(scale, 4, 256, (2.0f32, &mut ys[..])); //~ ERROR cannot be passed to an asynchronous launch
}
