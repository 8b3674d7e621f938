//! `PreloadMut::sync` copies the device data back mid-region (one copy out each), and
//! `update` pushes host edits (one copy in each), the mapping kept: the kernels see the edits,
//! the host sees the kernels' results.
//@ run: 1 => h2d=2 d2h=2
//@ run: 4 => h2d=5 d2h=5

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let rounds: u32 = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 1000;
    let mut v = vec![0u32; n];
    {
        let mut dv = offload::preload_mut(&mut v[..]); // 1 in
        for round in 0..rounds {
            offload::launch!(kernels::increment, 8, 128, (&mut dv,))?;
            let seen = dv.sync(); // 1 out
            assert!(seen.iter().all(|&x| x == 2 * round + 1), "round {round}: {:?}", &seen[..4]);
            dv.update(|host| host.iter_mut().for_each(|x| *x += 1)); // 1 in
        }
        offload::launch!(kernels::increment, 8, 128, (&mut dv,))?;
    } // 1 out
    assert!(v.iter().all(|&x| x == 2 * rounds + 1), "{:?}", &v[..4]);
    println!("ok: {rounds} rounds");
    Ok(())
}
