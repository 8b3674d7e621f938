//! The program calls the offload runtime through a table that its first constructor fills. The
//! table has whole pages of its own, which the loader then makes read-only, as full RELRO makes
//! the dynamic loader's table: a stray write cannot redirect the runtime calls. The calls still
//! go through it.
//@ run: => h2d=2 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    assert!(offload::__private::runtime_table_sealed(), "the runtime's table is still writable");
    let xs = vec![1.0f32; 1000];
    let mut ys = vec![1.0f32; 1000];
    {
        let x = offload::preload(&xs[..]);
        let mut y = offload::preload_mut(&mut ys[..]);
        offload::launch!(kernels::saxpy, 8, 128, (2.0f32, &x, &mut y))?;
    }
    assert_eq!(ys[999], 3.0);
    println!("ok: the table is read-only, and {} ran a kernel through it", offload::device_name());
    Ok(())
}
