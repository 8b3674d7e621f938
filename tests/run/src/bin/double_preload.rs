//! Two preloads of the same data share one device allocation: the second copies x in again (an
//! update: nothing proves the host left it alone), and keeps it on the device after the first
//! is gone.
//@ run: 3 => h2d=3 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut ys = vec![0.0f32; n];
    {
        let first = offload::preload(&xs[..]);
        let second = offload::preload(&xs[..]);
        let mut y = offload::preload_mut(&mut ys[..]);
        for _ in 0..k {
            offload::launch!(kernels::saxpy, 8, 128, (1.0f32, &first, &mut y))?;
        }
        // The host still reads the source of a `Preload` while it lives.
        assert_eq!(first.host()[3], 3.0);
        drop(first);
        offload::launch!(kernels::saxpy, 8, 128, (1.0f32, &second, &mut y))?;
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, (k + 1) as f32 * i as f32, "y[{i}]");
    }
    println!("ok");
    Ok(())
}
