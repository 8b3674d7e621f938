//! The rows `PreloadMut::sync_range` lends borrow the guard as `sync` does: no kernel can change
//! the device copy and no range can be copied in while the host reads them; the closure
//! `update_range` runs cannot reach the guard either.

#[offload::kernel]
fn increment(y: &mut [u32]) {
    let _ = y;
}

fn main() {
    closure_reaches_guard(&mut [0; 64]);
    let mut v = vec![0u32; 64];
    let mut dv = offload::preload_mut(&mut v[..]);
    let row = dv.sync_range(16..32);
    let _ = offload::launch!(increment, 1, 16, (&mut dv,)); //~ ERROR cannot borrow `dv` as mutable more than once at a time
    dv.update_range(..16, |halo| halo.copy_from_slice(row)); //~ ERROR cannot borrow `dv` as mutable more than once at a time
}

fn closure_reaches_guard(v: &mut [u32]) {
    let mut dv = offload::preload_mut(v);
    dv.update_range(..16, |_| dv.len()); //~ ERROR cannot borrow `dv` as mutable because it is also borrowed as immutable
}
