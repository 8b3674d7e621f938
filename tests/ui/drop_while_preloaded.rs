//! The source of a `PreloadMut` cannot be dropped while the guard lives: the guard copies the
//! device data back into it when it is dropped.

use offload::preload_mut;

fn main() {
    let mut ys = vec![0.0f32; 16];
    let y = preload_mut(&mut ys[..]);
    drop(ys); //~ ERROR cannot move out of `ys` because it is borrowed
    drop(y);
}
