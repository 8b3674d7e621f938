//! Generic kernels: `axpy<T>` launched as f32, f64 and i32, and `tile_sums<TILE>` with two tile
//! sizes, each instance its own entry point in the device images, checked against the CPU;
//! an instance launched asynchronously over preloaded data too; the f64 launches name no
//! instance, which their arguments name.
//@ run: 1000 => h2d=12 d2h=6

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let blocks = n.div_ceil(128) as u32;

    let x32: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y32 = vec![1.0f32; n];
    offload::launch!(kernels::axpy::<f32>, blocks, 128, (0.5f32, &x32[..], &mut y32[..]))?;
    assert!(y32.iter().enumerate().all(|(i, &y)| y == 0.5 * i as f32 + 1.0), "f32");

    let x64: Vec<f64> = (0..n).map(|i| i as f64 * 1e-3).collect();
    let mut y64 = vec![2.0f64; n];
    // The instance the arguments name: `axpy::<f64>`.
    offload::launch!(kernels::axpy, blocks, 128, (3.0f64, &x64[..], &mut y64[..]))?;
    assert!(y64.iter().zip(&x64).all(|(&y, &x)| y == 3.0 * x + 2.0), "f64");

    let xi: Vec<i32> = (0..n as i32).map(|i| i - 500).collect();
    let mut yi = vec![7i32; n];
    offload::launch!(kernels::axpy::<i32>, blocks, 128, (-2i32, &xi[..], &mut yi[..]))?;
    assert!(yi.iter().zip(&xi).all(|(&y, &x)| y == -2 * x + 7), "i32");

    let values: Vec<u32> = (0..n as u32).collect();
    for tile in [4, 32] {
        let mut sums = vec![0u32; n.div_ceil(tile)];
        let grid = sums.len().div_ceil(128) as u32;
        if tile == 4 {
            offload::launch!(kernels::tile_sums::<4>, grid, 128, (&values[..], &mut sums[..]))?;
        } else {
            offload::launch!(kernels::tile_sums::<32>, grid, 128, (&values[..], &mut sums[..]))?;
        }
        for (t, &sum) in sums.iter().enumerate() {
            let expected: u32 = values.iter().skip(t * tile).take(tile).sum();
            assert_eq!(sum, expected, "tile {tile}, sums[{t}]");
        }
    }

    // Preloaded (2 in), three asynchronous launches of one instance, copied back once.
    let mut y = y64.clone();
    {
        let x = offload::preload(&x64[..]);
        let mut dy = offload::preload_mut(&mut y[..]);
        for _ in 0..3 {
            offload::launch_async!(kernels::axpy, blocks, 128, (1.0f64, &x, &mut dy))?;
        }
    }
    let expected = |y0: f64, x: f64| (0..3).fold(y0, |y, _| 1.0 * x + y);
    assert!(y.iter().zip(&y64).zip(&x64).all(|((&y, &y0), &x)| y == expected(y0, x)), "async");
    println!("ok: axpy as f32, f64 and i32, tile_sums with tiles of 4 and 32");
    Ok(())
}
