//! Jacobi relaxation of a heated plate: two buffers preloaded once, swapped between launches of
//! a 2D grid, copied back once; checked against the same computation on the CPU.
//!
//! `jacobi [WIDTH] [HEIGHT] [ITERATIONS]`
//!
//! Copies stay two in and two out whatever the number of iterations:
//@ run: 64 48 10 => h2d=2 d2h=2
//@ run: 64 48 51 => h2d=2 d2h=2

mod kernels;

use std::time::Instant;

use offload::preload_mut;

/// The plate: 100 degrees along the top edge, 0 elsewhere.
fn initial(width: usize, height: usize) -> Vec<f32> {
    (0..width * height).map(|c| if c < width { 100.0 } else { 0.0 }).collect()
}

/// The CPU reference of `kernels::jacobi_step`.
fn step_on_cpu(w: usize, h: usize, src: &[f32], dst: &mut [f32]) {
    for c in 0..w * h {
        let (x, y) = (c % w, c / w);
        dst[c] = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
            src[c]
        } else {
            0.25 * (src[c - w] + src[c + w] + src[c - 1] + src[c + 1])
        };
    }
}

fn main() -> Result<(), offload::Error> {
    let arg = |i: usize, default: usize| {
        std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
    };
    let (width, height, iterations) = (arg(1, 512), arg(2, 512), arg(3, 200));
    let mut a = initial(width, height);
    let mut b = a.clone();
    // Blocks of 16 x 16 threads over the plate, x along a row and y down the columns.
    let threads = (16u32, 16u32);
    let blocks = ((width as u32).div_ceil(16), (height as u32).div_ceil(16));

    let start = Instant::now();
    {
        let mut da = preload_mut(&mut a[..]);
        let mut db = preload_mut(&mut b[..]);
        for i in 0..iterations {
            let (w, h) = (width as u32, height as u32);
            if i % 2 == 0 {
                offload::launch!(kernels::jacobi_step, blocks, threads, (w, h, &da, &mut db))?;
            } else {
                offload::launch!(kernels::jacobi_step, blocks, threads, (w, h, &db, &mut da))?;
            }
        }
    } // both buffers come back here
    let offloaded = start.elapsed();
    let result = if iterations % 2 == 0 { &a } else { &b };

    let mut ra = initial(width, height);
    let mut rb = ra.clone();
    for i in 0..iterations {
        if i % 2 == 0 {
            step_on_cpu(width, height, &ra, &mut rb)
        } else {
            step_on_cpu(width, height, &rb, &mut ra)
        }
    }
    let reference = if iterations % 2 == 0 { &ra } else { &rb };
    let max_error = result.iter().zip(reference).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    let mean = result.iter().map(|&t| f64::from(t)).sum::<f64>() / result.len() as f64;
    println!(
        "jacobi {width}x{height}, {iterations} iterations on {}: {:.3} ms, mean temperature {mean:.4}, max error vs CPU {max_error:e}",
        offload::device_name(),
        offloaded.as_secs_f64() * 1e3
    );
    if max_error > 1e-4 {
        eprintln!("jacobi: result differs from the CPU reference");
        std::process::exit(1);
    }
    Ok(())
}
