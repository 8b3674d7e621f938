//! `offload!`'s fields as upstream's `core::offload::offload!` checks them: `kernel` and `args`
//! required, `args` a tuple literal, no field twice, no unknown field; and a raw pointer, which
//! upstream's examples pass (`&mut x as *mut _`), is refused at the argument with what to pass
//! instead: the launch needs the borrow to map the data and to keep the host off it. A negative
//! device is refused in upstream's words (an `i32` index is taken, and checked at run time),
//! and a wrong number of arguments is counted as the kernel's.

#[offload::offload_kernel]
pub fn fill(y: &mut [f64; 256]) {
    y[offload::gpu::global_id_x() % 256] = 1.0;
}

fn main() -> Result<(), offload::Error> {
    let mut x = [0.0f64; 256];
    offload::offload!(kernel = fill, kernel = fill, args = (&mut x,))?;
    //~^ ERROR duplicate field `kernel`
    offload::offload!(kernel = fill, args = (&mut x,), thread_dim = [256, 1, 1], thread_dim = [1, 1, 1])?;
    //~^ ERROR duplicate field `thread_dim`
    offload::offload!(kernel = fill, args = (&mut x,), grid = [1, 1, 1])?;
    //~^ ERROR unknown field `grid`
    offload::offload!(args = (&mut x,))?;
    //~^ ERROR missing `kernel`
    offload::offload!(kernel = fill)?;
    //~^ ERROR missing `args`
    let args = (&mut x,);
    offload::offload!(kernel = fill, args = args)?;
    //~^ ERROR `args` must be a tuple literal
    offload::offload!(kernel = fill, workgroup_dim = [1, 1, 1], args = (&mut x as *mut [f64; 256],))?;
    //~^ ERROR `*mut [f64; 256]` cannot be passed to a kernel parameter of this type
    offload::offload!(kernel = fill, device = -1, args = (&mut x,))?;
    //~^ ERROR `device` must be non-negative, not -1
    offload::offload!(kernel = fill, args = (&mut x, 2.0f64))?;
    //~^ ERROR mismatched types
    let device: i32 = 0;
    offload::offload!(kernel = fill, device = device, args = (&mut x,))?;
    offload::offload!(kernel = fill, device = 0u32, args = (&mut x,))?;
    Ok(())
}
