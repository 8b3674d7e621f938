//! A kernel may take a `bool` by value (it only goes to the device), but not `bool` data by
//! reference: data copied to the device and back must accept every bit pattern. The macro says
//! so at the parameter, instead of the launch failing later with a `KernelArg` bound.

#[offload::kernel]
pub fn by_value(flag: bool, y: &mut [u32]) {
    let _ = (flag, y);
}

#[offload::kernel]
pub fn flags(mask: &[bool], y: &mut [u32]) {
    //~^ ERROR a kernel cannot take `bool` data by reference
    let _ = (mask, y);
}

#[offload::kernel]
pub fn one_flag(flag: &mut bool) {
    //~^ ERROR a kernel cannot take `bool` data by reference
    let _ = flag;
}

#[offload::kernel]
pub fn flag_array(flags: &[core::primitive::bool; 4]) {
    //~^ ERROR a kernel cannot take `bool` data by reference
    let _ = flags;
}

fn main() {}
