//! The reference `PreloadMut::sync` lends borrows the guard: no kernel can change the device
//! copy, and no update can change the host copy, while the host reads it.

#[offload::kernel]
fn increment(y: &mut [u32]) {
    let _ = y;
}

fn main() {
    let mut v = vec![0u32; 16];
    let mut dv = offload::preload_mut(&mut v[..]);
    let seen = dv.sync();
    let _ = offload::launch!(increment, 1, 16, (&mut dv,)); //~ ERROR cannot borrow `dv` as mutable more than once at a time
    dv.update(|host| host[0] = 1); //~ ERROR cannot borrow `dv` as mutable more than once at a time
    println!("{}", seen[0]);
}
