//! A kernel parameter taken by value travels in one 8-byte slot of the launch. A larger value
//! is refused at the parameter, when the kernel is compiled (no launch needed), with the
//! reference to take instead; values of 8 bytes or less are fine, lifetimes or not.

#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
pub struct Pair {
    a: u64,
    b: u64,
}

#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
pub struct Small {
    a: u32,
    b: f32,
}

#[offload::kernel]
pub fn by_value<'a>(
    pair: Pair,
    //~^ ERROR kernel `by_value`: parameter `pair: Pair` is taken by value
    three: [u32; 3],
    //~^ ERROR kernel `by_value`: parameter `three: [u32; 3]` is taken by value
    small: Small,
    // Braces in the type as written stay text in the check's message.
    braced: [u8; { 4 }],
    word: u64,
    y: &'a mut [u64],
) {
    let _ = (pair, three, small, braced, word, y);
}

fn main() {}
