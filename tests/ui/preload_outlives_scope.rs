//! A `Preload` cannot outlive its source: storing the guard beyond the source's scope is refused.

use offload::{Preload, preload};

fn main() {
    let x: Preload<[f32]>;
    {
        let xs = [1.0f32; 16];
        x = preload(&xs[..]); //~ ERROR `xs` does not live long enough
    }
    drop(x);
}
