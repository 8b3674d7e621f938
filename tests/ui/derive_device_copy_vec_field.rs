//! `#[derive(offload::DeviceCopy)]` refuses a struct with a field that is not plain data: a `Vec`
//! points to host memory (and is not `Copy`, which the derive requires as well).

#[derive(Clone, offload::DeviceCopy)]
//~^ ERROR `Vec<f32>` cannot be copied bitwise to an offload device
//~| ERROR the trait bound `Weights: Copy` is not satisfied
#[repr(C)]
struct Weights {
    count: u32,
    values: Vec<f32>,
}

fn main() {}
