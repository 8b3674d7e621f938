//! Device data has no padding (its bytes are copied and read as they are) and accepts every
//! bit pattern (a kernel, or a stale device copy, may hand any bytes back): a struct with
//! padding and a `bool` are refused.
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

#[derive(Clone, Copy, offload::DeviceCopy)]
#[repr(C)]
struct Padded {
    //~^ ERROR DeviceCopy types cannot have padding
    tag: u8,
    value: u32,
}

fn main() {
    let flags = [true; 4];
    let _f = offload::preload(&flags);
    //~^ ERROR `bool` cannot be copied bitwise to an offload device
}
