//! Threads preloading the same data at the same moment: the first maps it, the others wait for
//! its copy, share its allocation and copy their bytes in again (an update each), the last one
//! out releases it. Every kernel reads the right data. The barriers make the copies countable:
//! all threads hold a guard at once, and all are gone before the next round.
//@ tsan
//@ run: 8 5 => h2d=80 d2h=40

use std::sync::Barrier;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() {
    let arg = |i: usize| -> usize { std::env::args().nth(i).unwrap().parse().unwrap() };
    let (threads, rounds) = (arg(1), arg(2));
    let n = 4096;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (held, gone) = (Barrier::new(threads), Barrier::new(threads));
    std::thread::scope(|s| {
        for t in 0..threads {
            let (xs, held, gone) = (&xs, &held, &gone);
            s.spawn(move || {
                let mut ys = vec![t as f32; n];
                for _ in 0..rounds {
                    let x = offload::preload(&xs[..]); // 1 in, by one of the threads
                    held.wait();
                    let blocks = (n / 128) as u32;
                    offload::launch!(kernels::saxpy, blocks, 128, (1.0f32, &x, &mut ys[..]))
                        .unwrap(); // 1 in, 1 out
                    drop(x);
                    gone.wait();
                }
                for (i, y) in ys.iter().enumerate() {
                    assert_eq!(*y, t as f32 + (rounds * i) as f32, "thread {t}, y[{i}]");
                }
            });
        }
    });
    println!("ok: {threads} threads, {rounds} rounds");
}
