//! A leaked guard (`mem::forget` is safe) leaves its data mapped with a reference the runtime
//! never sees released. Exclusive borrows copy ALWAYS, so they still move the current data:
//! a later `&T`/`&mut T` launch and a `preload_mut` of the same memory see the host's values,
//! and the kernel's results come back.
//@ run: 1 => h2d=5 d2h=2

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let n = 512;
    let mut xs = vec![1.0f32; n];
    let mut ys = vec![0.0f32; n];
    std::mem::forget(offload::preload(&xs[..])); // 1 in; never released
    xs.fill(3.0);
    // x is mapped (stale: 1.0); TO|ALWAYS copies the 3.0s anyway.
    offload::launch!(kernels::saxpy, 4, 128, (1.0f32, &xs[..], &mut ys[..]))?; // 2 in, 1 out
    assert!(ys.iter().all(|&y| y == 3.0), "stale x reached the kernel: {}", ys[0]);

    let mut counts = vec![7u32; n];
    std::mem::forget(offload::preload(&counts[..])); // 1 in (the 7s); never released
    counts.fill(10);
    {
        let mut c = offload::preload_mut(&mut counts[..]); // TO|ALWAYS: the 10s go in
        offload::launch!(kernels::increment, 4, 128, (&mut c,))?;
    } // FROM|ALWAYS: the 11s come back, although the runtime still counts the leaked reference
    assert!(counts.iter().all(|&c| c == 11), "{}", counts[0]);
    println!("ok");
    Ok(())
}
