//! A non-generic `DeviceCopy` struct with a field of a padded instantiation of a generic one:
//! the struct's sizes add up (the padding is inside the field), and the field's own check
//! refuses it where the struct is defined.

#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
struct Pair<A, B> {
    //~^ ERROR `Pair` has padding with these type arguments
    a: A,
    b: B,
}

#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
struct Holder {
    pair: Pair<u8, u64>,
    count: u64,
}

/// Unpadded: accepted.
#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
struct Fine {
    pair: Pair<u32, f32>,
    count: u64,
}

fn main() {}
