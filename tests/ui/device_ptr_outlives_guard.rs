//! A guard's device address cannot outlive the guard: the mapping ends with it.

use offload::{AsDevicePtr, DevicePtr, preload};

fn main() {
    let xs = [1.0f32; 16];
    let address: DevicePtr<[f32]>;
    {
        let guard = preload(&xs[..]);
        address = guard.device_ptr(); //~ ERROR `guard` does not live long enough
    }
    println!("{:#x}", address.addr());
}
