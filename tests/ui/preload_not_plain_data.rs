//! Only plain data can be preloaded: a `Vec<String>` holds pointers to host memory, and so does a
//! struct holding a reference.
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

use offload::preload;

struct Scaled<'a> {
    factor: f32,
    data: &'a [f32],
}

fn main() {
    let names = vec![String::from("x"); 4];
    let _n = preload(&names);
    //~^ ERROR `Vec<String>` cannot be copied bitwise to an offload device

    let data = [1.0f32; 4];
    let scaled = Scaled { factor: 2.0, data: &data };
    let _s = preload(&scaled);
    //~^ ERROR `Scaled<'_>` cannot be copied bitwise to an offload device
}
