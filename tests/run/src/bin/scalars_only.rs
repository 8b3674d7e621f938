//! A kernel taking scalars only launches without any copy.
//@ run: 5 => h2d=0 d2h=0

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    for i in 0..k {
        offload::launch!(kernels::scalars_only, 1, 32, (1.5f32, i as u64, -3i32))?;
    }
    println!("ok");
    Ok(())
}
