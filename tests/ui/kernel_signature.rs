//! Kernel signatures upstream allows that cannot be kept, each refused at the kernel with what
//! to write: a raw pointer (the launch could neither map its data nor keep the host off it), a
//! return value, and an ABI of another kind than upstream's `extern "gpu-kernel"` (which is
//! taken, as `#[no_mangle]` and `-> ()` are: see the run test upstream_control_flow.rs).

#[offload::kernel]
pub fn raw(x: *mut f32, n: usize) {
    //~^ ERROR a kernel cannot take a raw pointer
    let _ = (x, n);
}

#[offload::kernel]
pub fn raw_array(x: *const [f64; 256]) {
    //~^ ERROR a kernel cannot take a raw pointer
    let _ = x;
}

#[offload::kernel]
pub fn returns(y: &mut [f32]) -> f32 {
    //~^ ERROR a kernel returns nothing
    y[0]
}

#[offload::kernel]
pub extern "C" fn c_abi(y: &mut [f32]) {
    //~^ ERROR a kernel is a Rust function
    y[0] = 1.0;
}

fn main() {}
