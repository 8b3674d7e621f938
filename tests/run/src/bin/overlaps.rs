//! A preload that partly overlaps, or encloses, data already preloaded is `Error::OverlapsMapped`
//! instead of the runtime ending the process; a range inside preloaded data is present (no
//! copy), a disjoint one maps as usual, and once the preloads are gone the larger range maps.
//@ run: => h2d=4 d2h=1

use offload::Error;

fn main() {
    let mut xs = vec![1.0f32; 100];
    {
        let middle = offload::preload(&xs[10..20]); // 1 in
        assert!(matches!(offload::try_preload(&xs[..]), Err(Error::OverlapsMapped { .. })));
        assert!(matches!(offload::try_preload(&xs[15..30]), Err(Error::OverlapsMapped { .. })));
        assert!(matches!(offload::try_preload(&xs[5..12]), Err(Error::OverlapsMapped { .. })));
        let inside = offload::preload(&xs[12..18]); // present: no copy
        let disjoint = offload::preload(&xs[20..30]); // 1 in
        drop((inside, disjoint, middle));
    }
    let all = offload::try_preload(&xs[..]).expect("nothing is preloaded any more"); // 1 in
    drop(all);
    drop(offload::preload_mut(&mut xs[..])); // 1 in, 1 out
    println!("ok");
}
