//! A preload that partly overlaps, or encloses, data already preloaded is `Error::OverlapsMapped`
//! instead of the runtime ending the process; a range inside preloaded data is present (no new
//! mapping, its bytes copied in again), a disjoint one maps as usual, and once the preloads are gone the larger range maps.
//! The plain `&T`/`&mut T` arguments of `launch!` are checked the same way, and the error says
//! which launch it comes from.
//@ run: => h2d=11 d2h=4

use offload::Error;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() {
    let mut xs = vec![1.0f32; 100];
    let mut ys = vec![0.0f32; 8];
    {
        let middle = offload::preload(&xs[10..20]); // 1 in
        let e = offload::try_preload(&xs[..]).err();
        assert_eq!(e, Some(Error::OverlapsMapped { bytes: 400, kernel: None }));
        let message = e.unwrap().to_string();
        assert!(message.starts_with("a preload of 400 bytes partly overlaps"), "{message}");
        assert!(matches!(offload::try_preload(&xs[15..30]), Err(Error::OverlapsMapped { .. })));
        assert!(matches!(offload::try_preload(&xs[5..12]), Err(Error::OverlapsMapped { .. })));
        // The same checks whether the default device is named or not.
        let default = offload::Device::default_device().unwrap();
        assert!(matches!(default.preload(&xs[5..12]), Err(Error::OverlapsMapped { .. })));
        let inside = offload::preload(&xs[12..18]); // present: 1 in (an update)
        let disjoint = offload::preload(&xs[20..30]); // 1 in

        // A plain argument enclosing preloaded data, or partly overlapping it: refused.
        let e = offload::launch!(kernels::saxpy, 1, 32, (1.0f32, &xs[..], &mut ys[..]));
        assert!(matches!(e, Err(Error::OverlapsMapped { bytes: 400, kernel: Some("saxpy") })));
        let message = e.err().unwrap().to_string();
        assert!(message.starts_with("the launch of kernel `saxpy` would map"), "{message}");
        let e = offload::launch!(kernels::saxpy, 1, 32, (1.0f32, &xs[15..25], &mut ys[..]));
        assert!(matches!(e, Err(Error::OverlapsMapped { .. })), "{e:?}");
        // One inside preloaded data is present (a launch copies `&T` in even so: 2 in, 1 out);
        // one beside it maps as usual (2 in, 1 out).
        offload::launch!(kernels::saxpy, 1, 32, (1.0f32, &xs[12..18], &mut ys[..6])).unwrap();
        offload::launch!(kernels::saxpy, 1, 32, (1.0f32, &xs[40..48], &mut ys[..])).unwrap();
        drop((inside, disjoint, middle));
    }
    // A launch's own plain `&T` arguments may overlap each other (overlapping_arguments.rs has
    // the cases): they are mapped together, `xs[0..8]` in once, `zs[..4]` in and out (2 in,
    // 1 out).
    let mut zs = vec![0.0f32; 8];
    offload::launch!(kernels::add, 1, 32, (&xs[0..8], &xs[2..6], &mut zs[..4])).unwrap();
    assert_eq!(zs, [2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(ys, [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 1.0]);
    let all = offload::try_preload(&xs[..]).expect("nothing is preloaded any more"); // 1 in
    drop(all);
    drop(offload::preload_mut(&mut xs[..])); // 1 in, 1 out
    println!("ok");
}
