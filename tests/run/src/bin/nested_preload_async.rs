//! A `Preload` of data inside a live `Preload`'s data is counted without a runtime call, so
//! kernels queued with `launch_async!` go on running: it does not wait for them. A preload of
//! new data does wait first (the runtime's copy must not overlap a queued kernel), as does the
//! drop of a `PreloadMut` (its copy back). On the host-offload plugin a launch runs at once and
//! nothing is ever pending; on a GPU the queued launches stay pending until something waits.
//@ run: 3 => h2d=3 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::__private::pending_launches;

fn main() -> Result<(), offload::Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 4099;
    let xs: Vec<f32> = (0..n).map(|i| (i % 64) as f32).collect();
    let mut ys = vec![1.0f32; n];
    let zs = vec![2.0f32; 16];
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
        // Inside `x`, which `x` holds: counted, no copy, no wait.
        for range in [0..n, 10..20, 4000..4099] {
            let inner = offload::preload(&xs[range]);
            assert_eq!(pending_launches(), queued, "a counted preload waited for the kernels");
            drop(inner);
        }
        assert_eq!(pending_launches(), queued, "dropping a counted preload waited");
        // New data: its copy in waits for the queued kernels first.
        let z = offload::preload(&zs[..]); // 1 in
        assert_eq!(pending_launches(), 0, "a preload of new data did not wait");
        drop(z);
    } // y: 1 out
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 1.0 + k as f32 * 0.5 * (i % 64) as f32, "y[{i}]");
    }
    println!("ok: {k} queued launches went on past {} counted preloads", 3);
    Ok(())
}
