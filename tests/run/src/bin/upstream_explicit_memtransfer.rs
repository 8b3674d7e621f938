//! Follows rust-lang/rust's tests/codegen-llvm/gpu_offload/explicit_memtransfer.rs: `preload_mut`
//! and two `preload`s of the same data through `use core::offload::offload::*`, here
//! `use offload::*`. Copies: the first array in and out once; the second in twice (its second
//! preload shares the first's mapping, and copies the host's bytes in again, as every preload
//! does: see docs/RELIABILITY.md on leaked guards).
//@ run: => h2d=3 d2h=1

use offload::*;

fn main() {
    let mut x = [1234.0f64; 256];
    let p: PreloadMut<[f64; 256]> = preload_mut(&mut x);
    drop(core::hint::black_box(p));
    let y = [1234.0f64; 128];
    let q: Preload<[f64; 128]> = preload(&y);
    let r: Preload<[f64; 128]> = preload(&y);
    core::hint::black_box(&q);
    core::hint::black_box(&r);
    core::hint::black_box(&q);
    println!("ok: explicit_memtransfer.rs");
}
