//! While a `PreloadMut` lives, the host cannot write its source: the write would be lost when
//! the guard copies the device data back.

use offload::preload_mut;

fn main() {
    let mut ys = [0.0f32; 16];
    let y = preload_mut(&mut ys);
    ys[0] = 1.0; //~ ERROR cannot assign to `ys[_]` because it is borrowed
    drop(y);
}
