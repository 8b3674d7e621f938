//! `PreloadMut::write_bytes` sets every byte of the device copy, in order with the kernels
//! around it: the asynchronous launch queued before it is overwritten, the one after it sees
//! the bytes. It copies nothing: on a GPU it is a memset left queued on the library's stream,
//! on the host-offload plugin a write in place. Copies: each guard's preload in and its copy
//! back out; `sync` one out.
//@ run: => h2d=2 d2h=3

use offload::__private::pending_launches;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let gpu = !offload::device_name().contains("host-offload");
    let mut v = vec![7u32; 1000];
    {
        let mut dv = offload::preload_mut(&mut v[..]);
        offload::launch_async!(kernels::increment, 8, 128, (&mut dv,))?; // 8 where it ran
        dv.write_bytes(0);
        assert_eq!(pending_launches() > 0, gpu, "the fill was waited for");
        offload::launch_async!(kernels::increment, 8, 128, (&mut dv,))?; // 1 after the fill
        let seen = dv.sync();
        assert!(seen.iter().all(|&x| x == 1), "{:?}", &seen[..4]);
        dv.write_bytes(0xff);
    }
    assert!(v.iter().all(|&x| x == u32::MAX), "{:?}", &v[..4]);

    // Every byte pattern is a value of a `DeviceCopy` type: all-ones `f32`s are NaNs.
    let mut w = vec![1.0f32; 3];
    offload::preload_mut(&mut w[..]).write_bytes(0xff);
    assert!(w.iter().all(|x| x.to_bits() == u32::MAX), "{w:?}");
    println!("ok");
    Ok(())
}
