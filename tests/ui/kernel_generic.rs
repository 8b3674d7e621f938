//! What a generic kernel must say, and what its launches may ask for. The device images are
//! built before the program that launches them, so a generic kernel lists the instances they
//! hold (`instances(..)`, one argument per type or const parameter); a launch of any other
//! instance does not compile; a launch without generic arguments takes the instance its
//! arguments name, and does not compile where they name none. Lifetime parameters are erased
//! and need no list.

use core::ops::Mul;

use offload::DeviceCopy;

#[offload::kernel]
pub fn unlisted<T>(y: &mut [T]) {
    //~^ ERROR a generic kernel lists the instances its device images hold
    let _ = y;
}

#[offload::kernel(instances(f32))]
pub fn not_generic(y: &mut [f32]) {
    //~^ ERROR `instances(..)` is for generic kernels
    let _ = y;
}

#[offload::kernel(instances(f32, (f64, 2)))]
//~^ ERROR kernel `wrong_count` has 1 type and const parameters
pub fn wrong_count<T>(y: &mut [T]) {
    let _ = y;
}

#[offload::kernel(instances(f32, f32))]
//~^ ERROR this instance is listed twice
pub fn twice<T>(y: &mut [T]) {
    let _ = y;
}

#[offload::kernel(instances(bool))]
//~^ ERROR `bool` cannot be copied bitwise to an offload device
//~| ERROR cannot multiply `bool` by `bool`
pub fn bounded<T: DeviceCopy + Copy + Mul<Output = T>>(a: T, y: &mut [T]) {
    if let Some(y) = y.get_mut(offload::gpu::global_id_x()) {
        *y = a * *y;
    }
}

#[offload::kernel(instances(f32, u32))]
pub fn scale<T: DeviceCopy + Copy + Mul<Output = T>>(a: T, y: &mut [T]) {
    if let Some(y) = y.get_mut(offload::gpu::global_id_x()) {
        *y = a * *y;
    }
}

#[offload::kernel(instances(4))]
pub fn fill<'a, const N: usize>(y: &'a mut [f32; N]) {
    y.fill(1.0);
}

#[offload::kernel]
pub fn with_lifetimes<'a, 'b: 'a>(x: &'a [f32], y: &'b mut [f32])
where
    'b: 'a,
{
    let _ = (x, y);
}

fn main() -> Result<(), offload::Error> {
    let mut ys = vec![1.0f64; 64];
    offload::launch!(scale::<f64>, 1, 64, (2.0f64, &mut ys[..]))?;
    //~^ ERROR kernel `scale` has no instance `scale<f64>` in its device images
    let mut zs = vec![1.0f32; 64];
    offload::launch!(scale, 1, 64, (2.0f32, &mut zs[..]))?;
    offload::launch!(scale, 1, 64, (2.0f64, &mut ys[..]))?;
    //~^ ERROR kernel `scale` has no instance `scale<f64>` in its device images
    let mut a = [0.0f32; 8];
    offload::launch!(fill::<8>, 1, 1, (&mut a,))?;
    //~^ ERROR kernel `fill` has no instance `fill<8>` in its device images
    let mut b = [0.0f32; 4];
    offload::launch!(fill::<4>, 1, 1, (&mut b,))?;
    offload::launch!(fill, 1, 1, (&mut b,))?;
    Ok(())
}
