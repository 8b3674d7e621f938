//! A `Preload` of data inside a live `Preload`'s data copies its bytes in again, so it waits for
//! the kernels queued with `launch_async!` first: its copy must not overlap a kernel that may
//! read them (one queued through a guard since leaked, over data the host changed after). Its
//! drop, counted against the outer guard's reference, waits for nothing; a `PreloadMut`'s drop
//! waits (its copy back). Sharing the outer guard's device copy without a wait goes through its
//! views (`x.slice(..)`). On the host-offload plugin a launch runs at once and nothing is ever
//! pending; on a GPU the queued launches stay pending until something waits.
//@ run: 3 => h2d=6 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::__private::pending_launches;

fn main() -> Result<(), offload::Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 4099;
    let xs: Vec<f32> = (0..n).map(|i| (i % 64) as f32).collect();
    let mut ys = vec![1.0f32; n];
    let zs = [2.0f32; 16];
    let gpu = !offload::device_name().contains("host-offload");
    {
        let x = offload::preload(&xs[..]); // 1 in
        let mut y = offload::preload_mut(&mut ys[..]); // 1 in
        let blocks = n.div_ceil(128) as u32;
        for _ in 0..k {
            offload::launch_async!(kernels::saxpy, blocks, 128, (0.5f32, &x, &mut y))?;
        }
        let queued = pending_launches();
        assert_eq!(queued, if gpu { k as u64 } else { 0 }, "launches queued");
        // A view of `x` is present data with no runtime call: the kernels go on.
        {
            let (vx, mut vy) = (x.slice(10..26), y.slice_mut(10..26));
            offload::launch_async!(kernels::saxpy, 1, 16, (0.0f32, &vx, &mut vy))?;
        }
        assert_eq!(pending_launches(), queued + u64::from(gpu), "a view waited for the kernels");
        // Inside `x`: each copies its bytes in (1 in each), after the queued kernels.
        for range in [0..n, 10..20, 4000..4099] {
            let inner = offload::preload(&xs[range.clone()]);
            assert_eq!(pending_launches(), 0, "a preload of present data did not wait");
            let blocks = range.len().div_ceil(128) as u32;
            let mut part = y.slice_mut(range);
            offload::launch_async!(kernels::saxpy, blocks, 128, (0.0f32, &inner, &mut part))?;
            let pending = pending_launches();
            // Its drop is counted: no wait.
            drop(inner);
            assert_eq!(pending_launches(), pending, "dropping a counted preload waited");
        }
        // New data: its copy in waits for the queued kernels first.
        offload::launch_async!(kernels::saxpy, blocks, 128, (0.0f32, &x, &mut y))?;
        let z = offload::preload(&zs[..]); // 1 in
        assert_eq!(pending_launches(), 0, "a preload of new data did not wait");
        drop(z);
    } // y: 1 out
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 1.0 + k as f32 * 0.5 * (i % 64) as f32, "y[{i}]");
    }
    println!("ok: {k} queued launches, waited for by each preload");
    Ok(())
}
