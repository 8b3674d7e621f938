//! `#[derive(offload::DeviceCopy)]` refuses a struct with a field that is not plain data: a `Vec`
//! points to host memory (and is not `Copy`, which the derive requires as well; with it, the
//! struct also has padding after `count`).

#[derive(Clone, offload::DeviceCopy)]
#[repr(C)]
struct Weights {
    //~^ ERROR the trait bound `Weights: Copy` is not satisfied
    //~| ERROR DeviceCopy types cannot have padding
    count: u32,
    values: Vec<f32>,
    //~^ ERROR `Vec<f32>` cannot be copied bitwise to an offload device
}

fn main() {}
