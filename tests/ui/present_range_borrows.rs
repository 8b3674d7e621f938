//! A range of a `PreloadMut` borrows the guard mutably: two ranges cannot be taken at once
//! (use `split_at_mut` and two preloads for disjoint halves), and the guard cannot be used
//! while a range lives.

fn main() {
    let mut v = vec![0u32; 16];
    let mut dv = offload::preload_mut(&mut v[..]);
    let first = dv.slice_mut(0..8);
    let second = dv.slice_mut(8..16); //~ ERROR cannot borrow `dv` as mutable more than once at a time
    let _ = dv.sync(); //~ ERROR cannot borrow `dv` as mutable more than once at a time
    drop((first, second));
}
