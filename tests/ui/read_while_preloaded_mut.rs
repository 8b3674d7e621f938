//! While a `PreloadMut` lives, the device holds the current value of its source: the host cannot
//! read the source until the guard is dropped (which copies the data back).

use offload::preload_mut;

fn main() {
    let mut ys = vec![0.0f32; 16];
    let y = preload_mut(&mut ys[..]);
    let first = ys[0]; //~ ERROR cannot borrow `ys` as immutable because it is also borrowed as mutable
    drop(y);
    println!("{first}");
}
