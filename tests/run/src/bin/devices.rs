//! Device selection: data preloaded on a chosen device and kernels launched there; a launch on
//! another device refuses that data (`Error::WrongDevice`) before anything runs, and a device
//! number past the count is `Error::NoSuchDevice`. Copies: 2 in and 1 out on the chosen device,
//! and nothing for the refused launch.
//@ run: 3 => h2d=2 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::{Device, Error};

fn main() -> Result<(), Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let count = Device::count();
    assert!(count >= 1, "no device");
    let last = Device::get(count - 1)?;
    println!(
        "{count} devices; default {}; using {} ({})",
        Device::default_device()?.name(),
        last.id(),
        last.name()
    );
    assert!(
        matches!(Device::get(count), Err(Error::NoSuchDevice { id, count: c }) if id == count && c == count)
    );

    let n = 3000;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut ys = vec![1.0f32; n];
    {
        let x = last.preload(&xs[..])?;
        let mut y = last.preload_mut(&mut ys[..])?;
        for _ in 0..k {
            offload::launch!(on last, kernels::saxpy, 24, 128, (2.0f32, &x, &mut y))?;
        }
        if count > 1 {
            let other = Device::get(0)?;
            let refused = offload::launch!(on other, kernels::saxpy, 24, 128, (2.0f32, &x, &mut y));
            assert!(
                matches!(refused, Err(Error::WrongDevice { argument, launch: 0, .. }) if argument == last.id() as i64),
                "{refused:?}"
            );
            println!("refused: {}", refused.unwrap_err());
        }
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 1.0 + k as f32 * 2.0 * i as f32, "y[{i}]");
    }
    println!("ok");
    Ok(())
}
