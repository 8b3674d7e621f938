//! A sub-range of a Vec and a whole slice: only the preloaded range travels, and the rest of
//! the Vec is untouched.
//@ run: 2 => h2d=1 d2h=1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let mut v: Vec<u32> = (0..1000).collect();
    {
        let mut middle = offload::preload_mut(&mut v[100..300]);
        for _ in 0..k {
            offload::launch!(kernels::increment, 2, 128, (&mut middle,))?;
        }
    }
    for (i, x) in v.iter().enumerate() {
        let expected = if (100..300).contains(&i) { i as u32 + k as u32 } else { i as u32 };
        assert_eq!(*x, expected, "v[{i}]");
    }
    println!("ok");
    Ok(())
}
