//! Threads each preloading their own data and launching at the same time: every result is
//! right and nothing deadlocks. Each thread copies 2 in and 1 out.
//@ tsan
//@ run: 8 => h2d=16 d2h=8

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() {
    let threads: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let n = 1000 + t;
                let xs: Vec<f32> = (0..n).map(|i| (i + t) as f32).collect();
                let mut ys = vec![1.0f32; n];
                {
                    let x = offload::preload(&xs[..]);
                    let mut y = offload::preload_mut(&mut ys[..]);
                    for _ in 0..5 {
                        offload::launch!(
                            kernels::saxpy,
                            n.div_ceil(128) as u32,
                            128,
                            (2.0f32, &x, &mut y)
                        )
                        .unwrap();
                    }
                }
                for (i, y) in ys.iter().enumerate() {
                    assert_eq!(*y, 1.0 + 10.0 * (i + t) as f32, "thread {t}, y[{i}]");
                }
            });
        }
    });
    println!("ok: {threads} threads");
}
