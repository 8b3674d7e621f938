//! Threads launching asynchronously and waiting at the same time, on the one stream per GPU
//! they share: each thread preloads its own data and, for several rounds, queues launches
//! (`launch_async!`, then a synchronous `launch!` of present data in between), waits in turn by
//! `offload::synchronize()`, by `sync` (a copy back in the middle) or by the guard's drop, and
//! checks what it reads. A wait that missed another thread's queued kernel would copy back a
//! stale value; a lost count would hang or skip a wait. On the host-offload plugin the launches
//! are synchronous; the results and the copies are the same.
//! Each thread copies per round: 2 in, 1 out (`sync`), 1 out (the drop).
//@ tsan
//@ run: 8 6 => h2d=96 d2h=96

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() {
    let arg = |i: usize| std::env::args().nth(i).unwrap().parse::<usize>().unwrap();
    let (threads, rounds) = (arg(1), arg(2));
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let n = 4096 + 64 * t;
                let blocks = n.div_ceil(128) as u32;
                let xs: Vec<f32> = (0..n).map(|i| ((i + t) % 64) as f32).collect();
                let mut ys = vec![0.0f32; n];
                for round in 0..rounds {
                    ys.fill(1.0);
                    let x = offload::preload(&xs[..]);
                    let mut y = offload::preload_mut(&mut ys[..]);
                    for _ in 0..3 {
                        offload::launch_async!(kernels::saxpy, blocks, 128, (1.0f32, &x, &mut y))
                            .unwrap();
                    }
                    offload::launch!(kernels::saxpy, blocks, 128, (1.0f32, &x, &mut y)).unwrap();
                    offload::launch_async!(kernels::saxpy, blocks, 128, (1.0f32, &x, &mut y))
                        .unwrap();
                    if (t + round) % 2 == 0 {
                        offload::synchronize().unwrap();
                    }
                    // Five launches so far: a copy back now must see all of them.
                    let mid = y.sync();
                    for i in [0, n / 2, n - 1] {
                        assert_eq!(mid[i], 1.0 + 5.0 * xs[i], "thread {t} round {round} y[{i}]");
                    }
                    offload::launch_async!(kernels::saxpy, blocks, 128, (1.0f32, &x, &mut y))
                        .unwrap();
                    drop(y); // waits, then copies back: six launches
                    drop(x);
                    for (i, y) in ys.iter().enumerate() {
                        assert_eq!(*y, 1.0 + 6.0 * xs[i], "thread {t} round {round} y[{i}]");
                    }
                }
            });
        }
    });
    println!("ok: {threads} threads, {rounds} rounds each");
}
