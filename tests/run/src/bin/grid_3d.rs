//! Launches along x, y and z: every cell of a box covered exactly once, with its coordinates,
//! by a 3D grid of 3D blocks; a matrix transposed by a 2D grid of 16 x 16 blocks; the geometry
//! as the kernel sees it. Geometries no GPU launches are refused before anything is copied.
//! Under `OFFLOAD_LAUNCH=runtime` on a GPU (libomptarget 19's own launch, along x only) a 3D
//! launch is refused, and the program checks that and launches along x instead, with the same
//! copies.
//@ run: => h2d=4 d2h=3
//@ run: => h2d=4 d2h=3 env=OFFLOAD_LAUNCH=runtime

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::Error;

#[path = "../runtime_launch.rs"]
mod runtime_launch;

fn main() -> Result<(), Error> {
    // A box of 37 x 19 x 5 cells, by blocks of 8 x 4 x 2 threads.
    let (nx, ny, nz) = (37u32, 19u32, 5u32);
    let mut cells = vec![[0u32; 4]; (nx * ny * nz) as usize];
    let grid = [nx.div_ceil(8), ny.div_ceil(4), nz.div_ceil(2)];
    let launched =
        offload::launch!(kernels::coordinates, grid, [8, 4, 2], (nx, ny, &mut cells[..]));
    let along_x_only = runtime_launch::refused(&launched);
    if along_x_only {
        // The first row, along x alone: the same copies.
        offload::launch!(kernels::coordinates, nx.div_ceil(8), 8, (nx, ny, &mut cells[..]))?;
    } else {
        launched?;
    }
    for (i, cell) in cells.iter().enumerate() {
        let i = i as u32;
        let (x, y, z) = (i % nx, i / nx % ny, i / (nx * ny));
        let expected = if along_x_only && (y, z) != (0, 0) { [0; 4] } else { [x, y, z, 1] };
        assert_eq!(*cell, expected, "cell {i}");
    }

    // A 100 x 70 matrix, transposed by 16 x 16 blocks.
    let (rows, cols) = (100u32, 70u32);
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut output = vec![0.0f32; input.len()];
    let grid = (cols.div_ceil(16), rows.div_ceil(16));
    let launched = offload::launch!(
        kernels::transpose,
        grid,
        (16, 16),
        (rows, cols, &input[..], &mut output[..])
    );
    if runtime_launch::refused(&launched) {
        offload::launch!(
            kernels::transpose,
            cols.div_ceil(16),
            16,
            (rows, cols, &input[..], &mut output[..])
        )?;
    } else {
        launched?;
        for r in 0..rows as usize {
            for c in 0..cols as usize {
                assert_eq!(
                    output[c * rows as usize + r],
                    input[r * cols as usize + c],
                    "({r}, {c})"
                );
            }
        }
    }

    // The geometry inside the kernel.
    let mut dims = [0u32; 6];
    let launched = offload::launch!(kernels::dimensions, [3, 5, 7], [8, 4, 2], (&mut dims,));
    if runtime_launch::refused(&launched) {
        offload::launch!(kernels::dimensions, 3, 8, (&mut dims,))?;
        assert_eq!(dims, [8, 1, 1, 3, 1, 1]);
    } else {
        launched?;
        assert_eq!(dims, [8, 4, 2, 3, 5, 7]);
    }

    // What no GPU launches: refused, nothing copied.
    let refused = |r: Result<(), Error>| match r {
        Err(Error::InvalidGeometry { kernel: "dimensions", reason }) => reason,
        other => panic!("not refused: {other:?}"),
    };
    let reason = refused(offload::launch!(kernels::dimensions, 1, [33, 32, 1], (&mut dims,)));
    assert!(reason.contains("at most 1024 threads"), "{reason}");
    let reason = refused(offload::launch!(kernels::dimensions, [1, 65536, 1], 1, (&mut dims,)));
    assert!(reason.contains("65535 blocks along y"), "{reason}");
    let reason = refused(offload::launch!(kernels::dimensions, 1, [1, 1, 0], (&mut dims,)));
    assert!(reason.contains("at least 1"), "{reason}");

    println!(
        "ok: {} cells, a {rows} x {cols} transpose{}",
        cells.len(),
        if along_x_only { " (along x only)" } else { "" }
    );
    Ok(())
}
