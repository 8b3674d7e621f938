//! The source of a `Preload` cannot be moved while the guard lives: the device copy is keyed by
//! the source's address.

use offload::preload;

fn consume(_: Vec<f32>) {}

fn main() {
    let xs = vec![1.0f32; 16];
    let x = preload(&xs[..]);
    consume(xs); //~ ERROR cannot move out of `xs` because it is borrowed
    drop(x);
}
