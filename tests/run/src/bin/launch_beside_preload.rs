//! One thread preloads data while another launches with a part of it as a plain `&[T]`, at the
//! same moment: whichever maps first, the other waits for it or finds its data present, and the
//! runtime is never asked for a mapping that encloses another (which ends the process). A third
//! thread launches with two overlapping parts as plain `&[T]`s, which the library maps as one
//! range for that launch, at the same moment too. Each round copies x in for the preload, the
//! part in for the launch (ALWAYS), the third thread's range in once, and each thread's y in
//! and out.
//@ tsan
//@ run: 40 => h2d=240 d2h=120

use std::sync::Barrier;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() {
    let rounds: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 512;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let start = Barrier::new(3);
    std::thread::scope(|s| {
        let (xs, start) = (&xs, &start);
        s.spawn(move || {
            let mut ys = vec![0.0f32; n];
            for _ in 0..rounds {
                start.wait();
                let x = offload::preload(&xs[..]); // 1 in
                offload::launch!(kernels::saxpy, 4, 128, (1.0f32, &x, &mut ys[..])).unwrap(); // 1 in, 1 out
            }
            assert!(ys.iter().enumerate().all(|(i, &y)| y == (rounds * i) as f32), "{}", ys[1]);
        });
        s.spawn(move || {
            let mut ys = vec![0.0f32; n / 4];
            for _ in 0..rounds {
                start.wait();
                // 2 in, 1 out
                offload::launch!(kernels::saxpy, 1, 128, (1.0f32, &xs[..n / 4], &mut ys[..]))
                    .unwrap();
            }
            assert!(ys.iter().enumerate().all(|(i, &y)| y == (rounds * i) as f32), "{}", ys[1]);
        });
        s.spawn(move || {
            let mut zs = vec![0.0f32; 128];
            for _ in 0..rounds {
                start.wait();
                // 2 in (the range both parts lie in, once), 1 out
                let (window, whole) = (&xs[..n / 8], &xs[..n / 4]);
                offload::launch!(kernels::normalise, 1, 128, (window, whole, &mut zs[..])).unwrap();
            }
            let sum: f32 = xs[..n / 4].iter().sum();
            assert!(zs.iter().enumerate().all(|(i, &z)| z == xs[i % (n / 8)] / sum), "{}", zs[1]);
        });
    });
    println!("ok: {rounds} rounds");
}
