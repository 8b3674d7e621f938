//! `PreloadMut::write_bytes` sets every byte of the device copy, in order with the kernels
//! around it: the asynchronous launch queued before it is overwritten, the one after it sees
//! the bytes. It copies nothing: on a GPU it is a memset left queued on the library's stream
//! (counted, so that the guard's copy back, `reclaim` and every wait come after it), on the
//! host-offload plugin a write in place. Copies: each guard's preload in; `sync` and the
//! copies back of the three guards dropped (the leaked one's copy is released, not copied).
//@ run: => h2d=4 d2h=4

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
        offload::launch_async!(kernels::increment, 8, 128, (&mut dv,))?; // 1 after the fill
        let seen = dv.sync();
        assert!(seen.iter().all(|&x| x == 1), "{:?}", &seen[..4]);
        assert_eq!(pending_launches(), 0, "the copy back did not wait");
        dv.write_bytes(0xff);
        assert_eq!(pending_launches(), u64::from(gpu), "the fill was not left queued");
    }
    assert!(v.iter().all(|&x| x == u32::MAX), "{:?}", &v[..4]);

    // 64 MiB: a copy back that did not wait for the fill would find it unfinished.
    let mut big = vec![1u8; 64 << 20];
    offload::preload_mut(&mut big[..]).write_bytes(0x5a);
    assert!(big.iter().all(|&b| b == 0x5a), "the copy back overtook the fill");

    // A leaked guard's queued fill: `reclaim` waits for it before the memory goes.
    let mut leaked = vec![3u8; 1 << 20];
    let mut guard = offload::preload_mut(&mut leaked[..]);
    guard.write_bytes(0);
    core::mem::forget(guard);
    assert_eq!(offload::reclaim(&mut leaked[..])?, 1);
    assert_eq!(pending_launches(), 0, "reclaim did not wait for the fill");

    // Every byte pattern is a value of a `DeviceCopy` type: all-ones `f32`s are NaNs.
    let mut w = vec![1.0f32; 3];
    offload::preload_mut(&mut w[..]).write_bytes(0xff);
    assert!(w.iter().all(|x| x.to_bits() == u32::MAX), "{w:?}");
    println!("ok");
    Ok(())
}
