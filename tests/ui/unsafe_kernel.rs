//! A kernel cannot be `unsafe fn`: `launch!` is safe, so an unsafe kernel would run its
//! unchecked operations from safe code.

#[offload::kernel]
pub unsafe fn poke(y: &mut [u32], i: usize) {
    //~^ ERROR a kernel cannot be `unsafe fn`
    unsafe { *y.get_unchecked_mut(i) = 1 }
}

fn main() {}
