//! A `Preload` cannot outlive its source: returning the guard of a local is refused.

use offload::{Preload, preload};

fn upload() -> Preload<'static, [f32]> {
    let xs = vec![1.0f32; 16];
    preload(&xs[..]) //~ ERROR cannot return value referencing local variable `xs`
}

fn main() {
    drop(upload());
}
