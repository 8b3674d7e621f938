//! A kernel may leave a parameter unnamed (`_`) and carry `#[inline]`: its slot is passed all
//! the same, and the rest line up.
//@ run: => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let mut y = vec![0u32; 40];
    offload::launch!(kernels::ignore_first, 2, 32, (1.5f32, &mut y[..]))?;
    assert!(y.iter().all(|&v| v == 7), "{y:?}");
    println!("ok");
    Ok(())
}
