//! What a `Region` forbids that the borrow checker sees: the host touching the data while a
//! region borrows it, a region moved into one launch and passed to a second (`reborrow` lends
//! it instead), and a thread holding two views of its part at once.

use offload::region::Linear1D;
use offload::{Region, launch};

#[offload::kernel]
pub fn bump(mut r: Region<'_, u32, Linear1D>) {
    let first = r.get_mut();
    let second = r.get_mut();
    //~^ ERROR cannot borrow `r` as mutable more than once at a time
    if let (Some(a), Some(_)) = (first, second) {
        *a += 1;
    }
}

fn main() -> Result<(), offload::Error> {
    let mut xs = vec![0u32; 64];
    let region = Region::<u32, Linear1D>::new(&mut xs[..]);
    xs[0] = 1;
    //~^ ERROR cannot borrow `xs` as mutable more than once at a time
    launch!(bump, 1, 64, (region,))?;
    launch!(bump, 1, 64, (region,))?;
    //~^ ERROR use of moved value: `region`
    Ok(())
}
