//! Range transfers: `sync_range` copies rows of a preloaded grid back and `update_range` copies
//! rows in, each alone. A halo exchange of a 64 x 100 grid moves two rows of 400 bytes each way
//! a step, whatever the grid's size: the preload and the copy back at the end are the grid's
//! 25600 bytes, and each of STEPS steps adds 800 bytes each way, and after the first a halo
//! row back (400 bytes) that shows the kernel saw the copies in before it. On a GPU the copies
//! in are left queued on the library's stream; `pinned` keeps the grid in a `HostBuffer`,
//! whose copies in the driver does not stage.
//@ run: 0 => h2d=1 d2h=1 h2d_bytes=25600 d2h_bytes=25600
//@ run: 3 => h2d=7 d2h=9 h2d_bytes=28000 d2h_bytes=28800
//@ run: 3 async => h2d=7 d2h=9 h2d_bytes=28000 d2h_bytes=28800
//@ run: 3 async pinned => h2d=7 d2h=9 h2d_bytes=28000 d2h_bytes=28800

use offload::__private::pending_launches;

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

const ROWS: usize = 64;
const COLS: usize = 100;

fn main() -> Result<(), offload::Error> {
    let steps: u32 = std::env::args().nth(1).unwrap().parse().unwrap();
    let asynchronous = std::env::args().any(|a| a == "async");
    if std::env::args().any(|a| a == "pinned") {
        exchange(&mut offload::HostBuffer::new(ROWS * COLS, 0u32)?, steps, asynchronous)
    } else {
        exchange(&mut vec![0u32; ROWS * COLS], steps, asynchronous)
    }
}

fn exchange(grid: &mut [u32], steps: u32, asynchronous: bool) -> Result<(), offload::Error> {
    let gpu = !offload::device_name().contains("host-offload");
    let blocks = (ROWS * COLS).div_ceil(256) as u32;
    {
        let mut dg = offload::preload_mut(grid); // the grid in
        for step in 0..steps {
            if asynchronous {
                offload::launch_async!(kernels::increment, blocks, 256, (&mut dg,))?;
            } else {
                offload::launch!(kernels::increment, blocks, 256, (&mut dg,))?;
            }
            if step > 0 {
                // The kernel ran after the last step's copies in: it incremented their value.
                let halo = dg.sync_range(..COLS);
                assert!(halo.iter().all(|&x| x == 2 * step + 1), "step {step}: {:?}", &halo[..4]);
            }
            // The first and last interior rows out (the kernels queued before come first).
            let first = dg.sync_range(COLS..2 * COLS);
            assert!(first.iter().all(|&x| x == step + 1), "step {step}: {:?}", &first[..4]);
            let last = dg.sync_range((ROWS - 2) * COLS..(ROWS - 1) * COLS);
            assert!(last.iter().all(|&x| x == step + 1), "step {step}: {:?}", &last[..4]);
            // The halo rows in, edited on the host: one more than the kernels gave them.
            dg.update_range(..COLS, |row| row.iter_mut().for_each(|x| *x = 2 * step + 2));
            dg.update_range((ROWS - 1) * COLS.., |row| {
                row.iter_mut().for_each(|x| *x = 2 * step + 2)
            });
            // On a GPU the copies in are queued behind the kernels, not waited for (the next
            // launch follows them on the stream); through the host plugin nothing is queued.
            assert_eq!(pending_launches() > 0, gpu, "step {step}: the copies in waited");
            // An empty range copies nothing.
            assert!(dg.sync_range(5..5).is_empty());
            dg.update_range(COLS..COLS, |row| assert!(row.is_empty()));
        }
        // Out of range: a panic before any copy, the guard left as it was.
        let past = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            dg.sync_range(ROWS * COLS - 1..ROWS * COLS + 1).len()
        }));
        assert!(past.is_err());
    } // the grid back
    for (i, &x) in grid.iter().enumerate() {
        let row = i / COLS;
        let halo = row == 0 || row == ROWS - 1;
        let expected = if steps == 0 {
            0
        } else if halo {
            2 * steps
        } else {
            steps
        };
        assert_eq!(x, expected, "cell {i} (row {row})");
    }
    println!("ok: {steps} steps");
    Ok(())
}
