//! `HostBuffer`: pinned host memory that preloads and launches take like any slice, and whose
//! failures say what failed: an allocation the runtime refuses (256 TiB, more than any
//! machine's address space) is `Error::HostAllocFailed` with the bytes asked for, and one whose size
//! overflows is `Error::HostBufferTooLarge` with the elements asked for; neither speaks of the
//! device. A guard leaked right after `update_range` enqueued its copy in (on a GPU, not waited
//! for) leaves the buffer free to drop: the drop waits for the copy and releases the leaked
//! mapping before the memory goes (the runtime would refuse to free memory it maps).
//! Copies: the launch's `&mut` argument, 1 in and 1 out; the leaked guard's preload and its
//! update, 2 in (4 MiB and 4 KiB). The refused allocation is a failed `cuMemAllocHost` in the
//! runtime, which compute-sanitizer reports: expected here.
//@ run: => h2d=3 d2h=1
//@ sanitize-expects: cuMemAllocHost_v2

use offload::__private::pending_launches;
use offload::{Error, HostBuffer};

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), Error> {
    let mut buf = HostBuffer::new(1000, 7u32)?;
    offload::launch!(kernels::increment, 8, 128, (&mut buf[..],))?;
    assert!(buf.iter().all(|&x| x == 8));
    assert_eq!(&HostBuffer::from_slice(&[1.0f32, 2.0])?[..], [1.0, 2.0]);

    let gpu = !offload::device_name().contains("host-offload");
    let mut pinned = HostBuffer::new(1 << 20, 1u32)?;
    let mut leaked = offload::preload_mut(&mut pinned[..]);
    leaked.update_range(..1024, |head| head.fill(2));
    assert_eq!(pending_launches() > 0, gpu, "the copy in was waited for");
    core::mem::forget(leaked);
    drop(pinned);
    assert_eq!(pending_launches(), 0, "the buffer was freed before the copy in was done");

    let e = HostBuffer::new(1 << 46, 0.0f32).err().expect("256 TiB of pinned memory");
    assert_eq!(e, Error::HostAllocFailed { bytes: 1 << 48 });
    let message = e.to_string();
    println!("{message}");
    assert!(message.starts_with("could not allocate 281474976710656 bytes of pinned host memory"));
    for wrong in ["map", "device", "overlap"] {
        assert!(!message.contains(wrong), "{message}");
    }

    let e = HostBuffer::new(usize::MAX / 2, 0.0f32).err().expect("more bytes than usize");
    assert_eq!(e, Error::HostBufferTooLarge { len: usize::MAX / 2, element_bytes: 4 });
    let message = e.to_string();
    println!("{message}");
    let bytes = (usize::MAX / 2) as u128 * 4;
    assert!(message.contains(&format!("would be {bytes} bytes")), "{message}");
    let e = HostBuffer::new(isize::MAX as usize + 1, 0u8).err().expect("more than a slice holds");
    assert!(matches!(e, Error::HostBufferTooLarge { element_bytes: 1, .. }), "{e:?}");
    println!("ok");
    Ok(())
}
