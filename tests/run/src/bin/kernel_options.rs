//! Kernel options, matrix views, shared arrays and events, run: a transpose through shared
//! tiles by a kernel of launch bounds (32, 8), refused for a block longer along x or larger in
//! all, before anything is copied; a matrix product through views with fused multiply-adds
//! (exact here: small integers); groups of four of a preloaded slice (its length read from the
//! guard) reversed through `read_array`/`write_array`, with shared memory counted in a `usize`;
//! and the three timed between two events, which give a time of 0 or more. Copies: 2 in and 1
//! out, 3 in and 1 out, 1 in and 1 out.
//@ run: 40 => h2d=6 d2h=3

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::{Error, Event};

#[path = "../runtime_launch.rs"]
mod runtime_launch;

fn main() -> Result<(), Error> {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(40);
    let start = Event::record()?;

    // Refused: a block of 64 x 4 is longer along x than 32, one of 32 x 16 larger than 32 x 8.
    let (input, mut output) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    for block in [(64, 4), (32, 16)] {
        let refused = offload::launch!(
            kernels::tile_transpose,
            (1, 1),
            block,
            shared = 32 * 33 * 4,
            (2, 2, &input[..], &mut output[..])
        );
        match refused {
            Err(Error::InvalidGeometry { kernel: "tile_transpose", reason }) => assert_eq!(
                reason,
                "the kernel's `launch_bounds` allows blocks of at most 32 x 8 x 1 threads"
            ),
            other => panic!("a block of {block:?} was not refused: {other:?}"),
        }
    }

    let (w, h) = (n + 3, n);
    let input: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    let mut output = vec![-1.0f32; w * h];
    let launched = offload::launch!(
        kernels::tile_transpose,
        (w.div_ceil(32) as u32, h.div_ceil(32) as u32),
        (32, 8),
        shared = 32 * 33 * 4,
        (w as u32, h as u32, &input[..], &mut output[..])
    );
    if !runtime_launch::refused(&launched) {
        launched?;
        for y in 0..h {
            for x in 0..w {
                assert_eq!(output[x * h + y], input[y * w + x], "({x}, {y})");
            }
        }
    }

    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 - 2.0).collect();
    let mut c = vec![f32::NAN; n * n];
    let grid = (n.div_ceil(16) as u32, n.div_ceil(16) as u32);
    let launched = offload::launch!(
        kernels::matrix_product,
        grid,
        (16, 16),
        (n as u32, &a[..], &b[..], &mut c[..])
    );
    if !runtime_launch::refused(&launched) {
        launched?;
        for r in 0..n {
            for col in 0..n {
                let expected: f32 = (0..n).map(|k| a[r * n + k] * b[k * n + col]).sum();
                assert_eq!(c[r * n + col], expected, "({r}, {col})");
            }
        }
    }

    let mut values: Vec<f32> = (0..4 * n).map(|i| i as f32).collect();
    let threads = 32usize;
    let mut on_device = offload::preload_mut(&mut values[..]);
    assert_eq!((on_device.len(), on_device.is_empty()), (4 * n, false));
    // Shared memory counted in a `usize`, as lengths are.
    let launched = offload::launch!(
        kernels::reverse_fours,
        n.div_ceil(threads) as u32,
        threads as u32,
        shared = threads * 16,
        (&mut on_device,)
    );
    drop(on_device);
    if !runtime_launch::refused(&launched) {
        launched?;
        for (g, four) in values.chunks(4).enumerate() {
            let first = (4 * g) as f32;
            assert_eq!(four, [first + 3.0, first + 2.0, first + 1.0, first], "group {g}");
        }
    }

    let end = Event::record()?;
    let ms = end.elapsed_ms(&start)?;
    assert!(ms >= 0.0, "{ms}");
    println!(
        "kernel options: {n} on {}: ok, {ms:.3} ms between the events",
        offload::device_name()
    );
    Ok(())
}
