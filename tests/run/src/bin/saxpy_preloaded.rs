//! saxpy over preloaded data: 2 copies in and 1 out, whatever the number of launches. On a GPU
//! the launches run on the library's stream; `OFFLOAD_LAUNCH=runtime` sends them through
//! libomptarget's `__tgt_target_kernel`, as lowered. The program reaches the runtime through the
//! table its loader fills, so binding everything at start-up (`LD_BIND_NOW`) and another
//! OpenMP runtime loaded first (GCC's libgomp, which also defines `omp_get_num_devices`) change
//! nothing.
//@ run: 1 => h2d=2 d2h=1
//@ run: 7 => h2d=2 d2h=1
//@ run: 7 => h2d=2 d2h=1 env=OFFLOAD_LAUNCH=runtime
//@ run: 3 => h2d=2 d2h=1 env=LD_BIND_NOW=1
//@ run: 3 => h2d=2 d2h=1 env=LD_PRELOAD=libgomp.so.1

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let k: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let n = 100_003;
    let xs: Vec<f32> = (0..n).map(|i| (i % 1024) as f32).collect();
    let mut ys = vec![1.0f32; n];
    {
        let x = offload::preload(&xs[..]);
        let mut y = offload::preload_mut(&mut ys[..]);
        for _ in 0..k {
            offload::launch!(kernels::saxpy, n.div_ceil(128) as u32, 128, (0.5f32, &x, &mut y))?;
        }
    }
    for (i, y) in ys.iter().enumerate() {
        assert_eq!(*y, 1.0 + k as f32 * 0.5 * (i % 1024) as f32, "y[{i}]");
    }
    println!("ok: {k} launches");
    Ok(())
}
