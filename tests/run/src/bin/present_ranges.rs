//! Ranges of a preloaded slice go to kernels without new copies (the runtime finds them inside
//! the present mapping), and the two halves of `split_at_mut` can be preloaded mutably side by
//! side: 2 copies in and 2 out in all, whatever the number of launches.
//@ run: 3 => h2d=3 d2h=3

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let k: u32 = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 1000;
    let mut v: Vec<u32> = (0..n as u32).collect();
    {
        let mut dv = offload::preload_mut(&mut v[..]); // 1 in
        for _ in 0..k {
            offload::launch!(kernels::increment, 2, 128, (&mut dv.slice_mut(100..300),))?;
            offload::launch!(kernels::increment, 1, 128, (&mut dv.slice_mut(..=9),))?;
        }
    } // 1 out
    for (i, x) in v.iter().enumerate() {
        let bumped = (100..300).contains(&i) || i <= 9;
        assert_eq!(*x, i as u32 + if bumped { k } else { 0 }, "v[{i}]");
    }

    let (left, right) = v.split_at_mut(n / 2);
    {
        let mut dl = offload::preload_mut(left); // 1 in
        let mut dr = offload::preload_mut(right); // 1 in
        offload::launch!(kernels::increment, 4, 128, (&mut dl,))?;
        offload::launch!(kernels::increment, 4, 128, (&mut dr,))?;
        offload::launch!(kernels::increment, 4, 128, (&mut dr,))?;
    } // 2 out
    assert!(
        v[..n / 2].iter().enumerate().all(
            |(i, &x)| x == i as u32 + 1 + if (100..300).contains(&i) || i <= 9 { k } else { 0 }
        )
    );
    assert!(v[n / 2..].iter().enumerate().all(|(i, &x)| x == (i + n / 2) as u32 + 2));
    println!("ok");
    Ok(())
}
