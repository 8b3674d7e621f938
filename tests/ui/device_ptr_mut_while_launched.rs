//! While a `PreloadMut`'s device address for writing lives, the guard is borrowed mutably:
//! neither a launch nor another address can reach the data the foreign code writes.

use offload::{AsDevicePtr, AsDevicePtrMut, preload_mut};

#[offload::kernel]
pub fn touch(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() -> Result<(), offload::Error> {
    let mut ys = [0.0f32; 16];
    let mut y = preload_mut(&mut ys[..]);
    let out = y.device_ptr_mut();
    let read = y.device_ptr(); //~ ERROR cannot borrow `y` as immutable because it is also borrowed as mutable
    offload::launch!(touch, 1, 1, (&mut y))?; //~ ERROR cannot borrow `y` as mutable more than once at a time
    println!("{:#x} {:#x}", out.addr(), read.addr());
    Ok(())
}
