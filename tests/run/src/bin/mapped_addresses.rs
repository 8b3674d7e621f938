//! A guard asks the runtime once, when it maps its data, where the data lives on the device,
//! and hands that address to every launch it is passed to (`KernelArg::mapped`), so that a
//! launch on a GPU does not look each argument up in the runtime's table. Checked here against
//! the runtime's own answer for every kind of present argument: `&Preload`, `&PreloadMut`,
//! `&mut PreloadMut`, ranges of both at an offset (read-only and read-write), a guard of data
//! inside a mapped slice, and empty data (0: not mapped, the launch passes null), and the
//! addresses foreign libraries get (`device_ptr`). Then launches compute what the CPU does.
//@ run: => h2d=3 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::param::{Mut, Ref};
use offload::{AsDevicePtr, AsDevicePtrMut, KernelArg, preload, preload_mut};

/// Where the runtime says `address` lives on the default device.
fn runtime(address: *const u8) -> u64 {
    // SAFETY: plain queries of the runtime's table; nothing is dereferenced.
    unsafe {
        let device = offload::sys::omp_get_default_device();
        offload::sys::omp_get_mapped_ptr(address.cast(), device) as usize as u64
    }
}

/// `arg`'s address as the launch gets it, against the runtime's.
fn same<P>(what: &str, arg: &impl KernelArg<P>) {
    let ours = arg.mapped();
    assert_ne!(ours, 0, "{what}: no address");
    assert_eq!(ours, runtime(arg.address()), "{what}");
}

fn main() -> Result<(), offload::Error> {
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let mut y = vec![1.0f32; 1000];
    let dx = preload(&x[..]); // 1 in
    same::<Ref<[f32]>>("&Preload", &&dx);
    same::<Ref<[f32]>>("a range of a Preload", &&dx.slice(10..20));
    {
        let inner = preload(&x[100..200]); // 1 in: a Preload copies present data again
        same::<Ref<[f32]>>("a Preload inside a Preload", &&inner);
        assert_eq!(KernelArg::<Ref<[f32]>>::mapped(&&inner), runtime(x.as_ptr().cast()) + 400);
    }
    let y_at_500 = y[500..].as_ptr().cast::<u8>();
    let mut dy = preload_mut(&mut y[..]); // 1 in
    same::<Ref<[f32]>>("&PreloadMut", &&dy);
    same::<Mut<[f32]>>("&mut PreloadMut", &&mut dy);
    same::<Ref<[f32]>>("a range of a PreloadMut", &&dy.slice(999..));
    same::<Mut<[f32]>>("a mutable range", &&mut dy.slice_mut(500..));
    // Foreign libraries get the same addresses (`device_ptr`).
    assert_eq!(dx.device_ptr().addr(), runtime(x.as_ptr().cast()));
    assert_eq!(dx.slice(10..20).device_ptr().addr(), runtime(x[10..].as_ptr().cast()));
    assert_eq!(dy.slice_mut(500..).device_ptr_mut().addr(), runtime(y_at_500));
    let empty: [f32; 0] = [];
    let de = preload(&empty[..]);
    assert_eq!(KernelArg::<Ref<[f32]>>::mapped(&&de), 0, "empty data");
    assert_eq!(de.device_ptr().addr(), 0, "empty data");

    offload::launch!(kernels::saxpy, 4, 256, (2.0f32, &dx, &mut dy))?;
    offload::launch!(
        kernels::saxpy,
        1,
        256,
        (1.0f32, &dx.slice(10..20), &mut dy.slice_mut(500..510))
    )?;
    drop(dy); // 1 out
    drop((dx, de));
    for (i, &v) in y.iter().enumerate() {
        let want =
            1.0 + 2.0 * i as f32 + if (500..510).contains(&i) { (i - 490) as f32 } else { 0.0 };
        assert_eq!(v, want, "y[{i}]");
    }
    println!("ok");
    Ok(())
}
