//! `Preload`s of data inside mapped data share its device allocation: the runtime sees one
//! mapping, however many guards there are and whichever goes first. Each copies its own bytes
//! in again (an update), since nothing proves the host left them alone (leaked_stale.rs). A
//! `PreloadMut` of mapped data still goes through the runtime: it copies ALWAYS, both ways.
//@ run: 10 => h2d=38 d2h=2 present=1

fn main() {
    let pairs: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let mut xs: Vec<f32> = (0..256).map(|i| i as f32).collect();
    {
        let outer = offload::preload(&xs[..]); // 1 in
        for _ in 0..pairs {
            let all = offload::preload(&xs[..]); // 1 in
            let part = offload::preload(&xs[10..20]); // 1 in
            drop(all);
            drop(part);
        }
        // A guard that outlives the one that mapped the data keeps the mapping: data inside it
        // is still present, and copied in again (an update each), without a new mapping.
        let inner = offload::preload(&xs[..16]); // 1 in
        drop(outer);
        let more = offload::try_preload(&xs[8..24]).expect("inside the mapping"); // 1 in
        let again = offload::try_preload(&xs[..]).expect("the mapping itself"); // 1 in
        drop((inner, again, more));
    }
    // All gone: new data under the same addresses is copied in again.
    xs.fill(1.0);
    drop(offload::preload(&xs[..])); // 1 in

    let mut ys = vec![2u32; 64];
    drop(offload::preload_mut(&mut ys[..])); // 1 in, 1 out

    // Data a leaked `Preload` keeps mapped: a `PreloadMut` of it is a present mapping in the
    // runtime (the one `present`) and copies both ways; further `Preload`s copy their part in.
    let mut zs = vec![3u32; 64];
    std::mem::forget(offload::preload(&zs[..])); // 1 in
    drop(offload::preload_mut(&mut zs[..])); // 1 in, 1 out
    for _ in 0..pairs {
        drop(offload::preload(&zs[..8])); // 1 in
    }
    println!("ok");
}
