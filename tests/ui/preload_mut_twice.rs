//! A second `preload_mut` of data that is already mutably preloaded does not compile: the two
//! guards would copy back over each other.

use offload::preload_mut;

fn main() {
    let mut ys = [0.0f32; 16];
    let a = preload_mut(&mut ys);
    let b = preload_mut(&mut ys); //~ ERROR cannot borrow `ys` as mutable more than once at a time
    drop(b);
    drop(a);
}
