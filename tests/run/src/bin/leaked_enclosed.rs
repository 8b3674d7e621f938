//! A leaked guard of a part of some data leaves that part mapped for good, and the runtime
//! cannot map a larger range around a mapping. Data lent `&mut` can hold no live guard, so a
//! `preload_mut` or a `&mut T` launch argument enclosing such a part releases it first, and
//! `offload::reclaim(&mut data)` does so for the `&T` cases, which are `Error::OverlapsMapped`
//! until then. Mappings that reach outside the data lent stay.
//@ run: => h2d=9 d2h=3

use offload::Error;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), Error> {
    let mut counts = vec![1u32; 256];
    std::mem::forget(offload::preload(&counts[16..32])); // 1 in; never released
    std::mem::forget(offload::preload_mut(&mut counts[64..80])); // 1 in; never copied back
    // A `PreloadMut` around them: both leaked mappings go, then the whole maps.
    {
        let mut c = offload::preload_mut(&mut counts[..]); // 1 in
        offload::launch!(kernels::increment, 2, 128, (&mut c,))?;
    } // 1 out
    assert!(counts.iter().all(|&c| c == 2), "{counts:?}");

    // The same through a `&mut T` launch argument.
    std::mem::forget(offload::preload(&counts[100..110])); // 1 in
    offload::launch!(kernels::increment, 2, 128, (&mut counts[..],))?; // 1 in, 1 out
    assert!(counts.iter().all(|&c| c == 3), "{counts:?}");

    // A `Preload` or a `&T` argument around a leaked part is refused, until `reclaim`.
    let xs = vec![2.0f32; 256];
    std::mem::forget(offload::preload(&xs[16..32])); // 1 in
    let e = offload::try_preload(&xs[..]).err();
    assert_eq!(e, Some(Error::OverlapsMapped { bytes: 1024, kernel: None }));
    assert!(e.unwrap().to_string().contains("offload::reclaim"));
    let mut ys = vec![0.0f32; 256];
    let e = offload::launch!(kernels::saxpy, 2, 128, (1.0f32, &xs[..], &mut ys[..]));
    assert!(matches!(e, Err(Error::OverlapsMapped { kernel: Some("saxpy"), .. })), "{e:?}");
    let mut xs = xs;
    // A range that the leaked part reaches out of keeps it; the whole releases it.
    assert_eq!(offload::reclaim(&mut xs[20..]), Ok(0));
    assert_eq!(offload::reclaim(&mut xs[..]), Ok(1));
    assert_eq!(offload::reclaim(&mut xs[..]), Ok(0));
    offload::launch!(kernels::saxpy, 2, 128, (1.0f32, &xs[..], &mut ys[..]))?; // 2 in, 1 out
    assert!(ys.iter().all(|&y| y == 2.0));
    drop(offload::preload(&xs[..])); // 1 in
    println!("ok");
    Ok(())
}
