//! saxpy through `launch_async!` over preloaded data: on the host-offload plugin every launch
//! runs synchronously, so the copies are those of `launch!` (2 in, 1 out, whatever the number of
//! launches), and the results are the same; `sync` and `synchronize` wait for queued kernels.
//@ run: 1 => h2d=2 d2h=2
//@ run: 7 => h2d=2 d2h=2

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 100_003;
    let xs: Vec<f32> = (0..n).map(|i| (i % 1024) as f32).collect();
    let mut ys = vec![1.0f32; n];
    let expect = |launches: usize, i: usize| 1.0 + launches as f32 * 0.5 * (i % 1024) as f32;
    {
        let x = offload::preload(&xs[..]);
        let mut y = offload::preload_mut(&mut ys[..]);
        let blocks = n.div_ceil(128) as u32;
        for _ in 0..k {
            offload::launch_async!(kernels::saxpy, blocks, 128, (0.5f32, &x, &mut y))?;
        }
        // `sync` waits for the queued kernels, then copies back (one copy out).
        let host = y.sync();
        assert_eq!(host[3], expect(k, 3));
        // A range, and a launch on a named device.
        let device = offload::Device::default_device()?;
        offload::launch_async!(on device, kernels::saxpy, blocks, 128, (0.5f32, &x.slice(..), &mut y.slice_mut(..)))?;
        device.synchronize()?;
        offload::synchronize()?;
    } // y dropped: waits for nothing pending, copies back (the second copy out)
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, expect(k + 1, i), "y[{i}]");
    }
    println!("ok: {} asynchronous launches", k + 1);
    Ok(())
}
