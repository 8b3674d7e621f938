//! A function of the kernels file that only kernels call is used in the host build too: the
//! kernel's body is type-checked there (never emitted), so its helpers are not dead code. A
//! function nothing calls still is.

#![deny(dead_code)]

fn twice(v: f32) -> f32 {
    v * 2.0
}

fn never_called() {}
//~^ ERROR function `never_called` is never used

#[offload::kernel]
pub fn scale(y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = twice(y[i]);
    }
}

fn main() {}
