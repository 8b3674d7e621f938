//! `#[derive(offload::DeviceCopy)]` refuses a struct without `#[repr(C)]` (or
//! `#[repr(transparent)]`): Rust's layout may differ between the host and the device.

#[derive(Clone, Copy, offload::DeviceCopy)]
struct Particle { //~ ERROR DeviceCopy needs `#[repr(C)]` or `#[repr(transparent)]`
    position: [f32; 3],
    mass: f32,
}

fn main() {}
