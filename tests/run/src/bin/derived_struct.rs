//! A `#[derive(DeviceCopy)]` struct passed by reference: mapped in for the launch (one copy),
//! beside preloaded data (one copy in, one out).
//@ run: 1 => h2d=2 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use kernels::Affine;

fn main() -> Result<(), offload::Error> {
    let params = Affine { scale: 3.0, offset: 0.5 };
    let mut ys: Vec<f32> = (0..513).map(|i| i as f32).collect();
    {
        let mut y = offload::preload_mut(&mut ys[..]);
        offload::launch!(kernels::affine, 5, 128, (&params, &mut y))?;
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 3.0 * i as f32 + 0.5, "y[{i}]");
    }
    println!("ok");
    Ok(())
}
