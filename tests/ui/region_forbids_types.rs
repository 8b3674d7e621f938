//! What a `Region` forbids that the types say: a region launched asynchronously (it is mapped
//! around one launch; a preloaded guard goes to a `Region` parameter for that), and data that
//! is not `DeviceCopy`.

use offload::region::Linear1D;
use offload::{Region, launch, launch_async};

#[offload::kernel]
pub fn bump(mut r: Region<'_, u32, Linear1D>) {
    if let Some(x) = r.get_mut() {
        *x += 1;
    }
}

#[offload::kernel]
pub fn flags(mut r: Region<'_, bool, Linear1D>) {
    let _ = r.get_mut();
}

fn main() -> Result<(), offload::Error> {
    let mut ys = vec![0u32; 64];
    launch_async!(bump, 1, 64, (Region::new(&mut ys[..]),))?;
    //~^ ERROR cannot be passed to an asynchronous launch

    let mut bs = vec![false; 64];
    launch!(flags, 1, 64, (Region::<bool, Linear1D>::new(&mut bs[..]),))?;
    //~^ ERROR cannot be copied bitwise to an offload device
    Ok(())
}
