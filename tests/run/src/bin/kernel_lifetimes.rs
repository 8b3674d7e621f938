//! Kernels with lifetime parameters (used by a parameter type, and bounded) launch like any
//! other, through `launch!` and `launch_async!`. One copy in for each of `xs` and `ys`, one out.
//@ run: 1 => h2d=2 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use kernels::Weight;

fn main() -> Result<(), offload::Error> {
    let xs: Vec<f32> = (0..300).map(|i| i as f32).collect();
    let mut ys = vec![0.0f32; 300];
    {
        let x = offload::preload(&xs[..]);
        let mut y = offload::preload_mut(&mut ys[..]);
        offload::launch!(kernels::copy_into, 3, 128, (&x, &mut y))?;
        let w = Weight { w: 2.0, _borrow: core::marker::PhantomData };
        offload::launch!(kernels::accumulate, 3, 128, (w, &x, &mut y))?;
        offload::launch_async!(kernels::accumulate, 3, 128, (w, &x, &mut y))?;
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 5.0 * i as f32, "y[{i}]");
    }
    println!("ok");
    Ok(())
}
