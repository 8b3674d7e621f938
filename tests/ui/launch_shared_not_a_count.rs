//! `shared = BYTES` takes any integer type (a length's `usize` too): a float is refused at the
//! launch's argument, with the types it takes.

#[offload::kernel]
pub fn fill(y: &mut [f32]) {
    let _ = y;
}

fn main() -> Result<(), offload::Error> {
    let mut y = [0.0f32; 4];
    offload::launch!(fill, 1, 32, shared = 4.0 * 32.0, (&mut y[..],))?;
    //~^ ERROR the trait bound `SharedBytes: From<{float}>` is not satisfied
    Ok(())
}
