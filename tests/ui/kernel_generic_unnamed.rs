//! A launch without generic arguments takes the instance its arguments name; where they name
//! none (`TILE` is in no parameter), the launch does not compile.
//@ normalize-stderr-test: "(library/offload/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

#[offload::kernel(instances(4, 32))]
pub fn tiles<const TILE: usize>(y: &mut [u32]) {
    let _ = (y, TILE);
}

fn main() -> Result<(), offload::Error> {
    let mut sums = vec![0u32; 64];
    offload::launch!(tiles, 1, 64, (&mut sums[..],))?;
    //~^ ERROR type annotations needed
    //~| ERROR type annotations needed
    //~| ERROR type annotations needed
    //~| ERROR type annotations needed
    //~| ERROR type annotations needed
    offload::launch!(tiles::<32>, 1, 64, (&mut sums[..],))?;
    Ok(())
}
