//! Empty data: an empty slice, a zero-length sub-slice and a zero-sized array preload and
//! launch without any copy (the runtime is not asked to map an empty range), and the kernel
//! sees empty slices.
//@ run: => h2d=0 d2h=0

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let empty: Vec<f32> = Vec::new();
    let mut values = vec![1u32; 64];
    let nothing: [u32; 0] = [];
    {
        let x = offload::preload(&empty[..]);
        let mut y = offload::preload_mut(&mut values[10..10]);
        let z = offload::preload(&nothing);
        assert_eq!((x.size_in_bytes(), y.size_in_bytes(), z.size_in_bytes()), (0, 0, 0));
        offload::launch!(kernels::increment, 1, 32, (&mut y,))?;
        let no_output: &mut [f32] = &mut [];
        offload::launch!(kernels::saxpy, 1, 32, (2.0f32, &x, no_output))?;
        let _ = y.sync();
    }
    assert!(values.iter().all(|&v| v == 1));
    println!("ok");
    Ok(())
}
