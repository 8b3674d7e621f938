//! A leaked `Preload` (`mem::forget` is safe) ends its borrow while its data stays mapped: the
//! host may then change the data, or free it and hand its memory to a new allocation. A later
//! `preload` of the same addresses finds them mapped and copies them in again, so the kernel
//! reads what the host holds at that `preload`, never the old device copy.
//@ run: 512 => h2d=8 d2h=2

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let mut ys = vec![0.0f32; n];

    // The data changed after the leak.
    let mut xs = vec![1.0f32; n];
    std::mem::forget(offload::preload(&xs[..])); // 1 in; never released
    xs.fill(3.0);
    {
        let x = offload::preload(&xs[..]); // present, copied in again: 1 in
        offload::launch!(kernels::saxpy, 4, 128, (1.0f32, &x, &mut ys[..]))?; // 1 in, 1 out
    }
    assert!(ys.iter().all(|&y| y == 3.0), "stale data reached the kernel: {}", ys[0]);

    // The data freed and its memory reused by a new allocation of the same size.
    let old = vec![1.0f32; n];
    let address = old.as_ptr();
    std::mem::forget(offload::preload(&old[..])); // 1 in; never released
    drop(old);
    let new = vec![7.0f32; n];
    assert_eq!(new.as_ptr(), address, "the allocator did not reuse the memory: no case to test");
    ys.fill(0.0);
    {
        let x = offload::preload(&new[..]); // present, copied in again: 1 in
        offload::launch!(kernels::saxpy, 4, 128, (1.0f32, &x, &mut ys[..]))?; // 1 in, 1 out
    }
    assert!(
        ys.iter().all(|&y| y == 7.0),
        "the old allocation's data reached the kernel: {}",
        ys[0]
    );

    // Nested in a live `Preload` the same holds (it may itself be the leaked one's neighbour):
    // each `preload` copies its own bytes in.
    let outer = offload::preload(&new[..]); // present: 1 in
    let inner = offload::preload(&new[8..16]); // present: 1 in
    drop((inner, outer));
    println!("ok");
    Ok(())
}
