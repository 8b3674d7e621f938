//! Preloads of a struct and of its fields, which safe Rust can hold shared and mutable at once:
//! data inside the struct's mapping that no live `Preload` holds may have changed on the host,
//! so a `Preload` of it copies it in again (an update), as every `Preload` of present data does.
//! A `PreloadMut` of a field copies both ways.
//@ run: 1 => h2d=5 d2h=2

use offload::DeviceCopy;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Pair {
    a: [f32; 64],
    b: [f32; 64],
}

fn main() -> Result<(), offload::Error> {
    let mut s = Pair { a: [1.0; 64], b: [2.0; 64] };
    let mut ys = vec![0.0f32; 64];
    let whole = offload::preload(&s); // 1 in
    let a = offload::preload(&s.a[..]); // present: 1 in (an update)
    drop(whole);
    // `a` holds only `s.a`: the host may change `s.b`, and a preload of it sees the change.
    s.b = [5.0; 64];
    {
        let b = offload::preload(&s.b[..]); // present: 1 in (the update)
        offload::launch!(kernels::saxpy, 1, 64, (1.0f32, &b, &mut ys[..]))?; // 1 in, 1 out
        assert!(ys.iter().all(|&y| y == 5.0), "stale s.b reached the kernel: {}", ys[0]);
    }
    // A field held mutably while `a` holds the other: copied in and back (ALWAYS).
    {
        let mut b = offload::preload_mut(&mut s.b[..]); // 1 in
        offload::launch!(kernels::saxpy, 1, 64, (1.0f32, &a, &mut b))?;
    } // 1 out
    assert!(s.b.iter().all(|&b| b == 6.0), "{}", s.b[0]);
    drop(a);
    println!("ok");
    Ok(())
}
