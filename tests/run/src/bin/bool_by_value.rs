//! A `bool` kernel parameter taken by value, through `launch!` and `launch_async!`: the kernel
//! sees `true` and `false` as passed. One copy in, two out (the `sync` and the drop).
//@ run: 1 => h2d=1 d2h=2

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let mut ys = vec![0.0f32; 200];
    {
        let mut y = offload::preload_mut(&mut ys[..]);
        offload::launch!(kernels::select, 2, 128, (true, 1.0f32, 2.0f32, &mut y))?;
        assert!(y.sync().iter().all(|&v| v == 1.0), "`true` did not reach the kernel");
        offload::launch_async!(kernels::select, 2, 128, (false, 1.0f32, 2.0f32, &mut y))?;
    }
    assert!(ys.iter().all(|&v| v == 2.0), "`false` did not reach the kernel");
    println!("ok");
    Ok(())
}
