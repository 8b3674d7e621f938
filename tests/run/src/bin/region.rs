//! `Region`: each thread's own part of a `&mut` buffer, safely. A region over a plain slice is
//! mapped around its launch (in and back); `reborrow` reuses it across launches; a preloaded
//! guard and a range of one go to a `Region` parameter with no copies, synchronously and
//! asynchronously; a 2D strategy and one of the program's own (chunks of four, a `&mut [T]`
//! each) partition too; a launch whose geometry the strategy refuses is `Error::Partition`,
//! before anything is copied. Copies: 2 in and 2 out (two mapped launches), 1 + 1 for the
//! preload, 1 + 1 for the 2D grid, 2 in (values, sums) and 2 out for the chunks.
//@ run: 1000 => h2d=6 d2h=6

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

use offload::region::Linear1D;
use offload::{Error, Region, launch, launch_async, offload, preload_mut};

fn main() -> Result<(), Error> {
    let n: usize = std::env::args().nth(1).unwrap().parse().unwrap();
    let blocks = n.div_ceil(128) as u32;
    let expect = |xs: &[f32], base: f32| xs.iter().enumerate().all(|(i, &x)| x == base + i as f32);

    // Mapped around the launch, as upstream's `offload!` maps it.
    let mut xs = vec![0.0f32; n];
    offload! {
        kernel = kernels::fill_region,
        workgroup_dim = [blocks, 1, 1],
        thread_dim = [128, 1, 1],
        args = (Region::<f32, Linear1D>::new(&mut xs[..]), 1.0f32),
    }?;
    assert!(expect(&xs, 1.0), "mapped region");

    // One region, two launches: the second one's refusal copies nothing.
    let mut region = Region::<f32, Linear1D>::new(&mut xs[..]);
    launch!(kernels::fill_region, blocks, 128, (region.reborrow(), 2.0f32))?;
    let refused = launch!(kernels::fill_region, [blocks, 2], [128, 1], (region.reborrow(), 3.0f32));
    match refused {
        Err(Error::Partition { kernel: "fill_region", message }) => {
            assert!(message.contains("along x"), "{message}")
        }
        other => panic!("a 2D launch of a Linear1D region: {other:?}"),
    }
    assert!(region.check_launch([blocks, 1, 1], [128, 1, 1]).is_ok());
    assert!(expect(&xs, 2.0), "reborrowed region");

    // Preloaded: a guard and a range of it, with no copies, synchronous and asynchronous.
    {
        let mut guard = preload_mut(&mut xs[..]);
        launch!(kernels::fill_region, blocks, 128, (&mut guard, 4.0f32))?;
        launch_async!(kernels::fill_region, blocks, 128, (&mut guard, 5.0f32))?;
        let mut tail = guard.slice_mut(n / 2..);
        launch_async!(kernels::fill_region, blocks, 128, (&mut tail, 6.0f32))?;
    }
    let (head, tail) = xs.split_at(n / 2);
    assert!(expect(head, 5.0), "preloaded region");
    assert!(expect(tail, 6.0), "preloaded range");

    // Rows of 16 over a 2D launch, wider than the rows along x: the threads past x = 15 get
    // nothing, and the others one cell each.
    let rows = 8;
    let mut cells = vec![0u32; 16 * rows];
    launch!(kernels::fill_rows, [1, rows as u32], [32, 1], (Region::new(&mut cells[..]),))?;
    let want = (0..16 * rows).map(|i| ((i / 16) * 100 + i % 16) as u32);
    assert!(cells.iter().copied().eq(want), "2D region");

    // The program's own strategy: chunks of four.
    let mut values: Vec<u32> = (0..n as u32).collect();
    let mut sums = vec![0u32; n.div_ceil(4)];
    let threads = sums.len().div_ceil(128) as u32;
    launch!(kernels::double_chunks, threads, 128, (Region::new(&mut values[..]), &mut sums[..]))?;
    assert!(values.iter().enumerate().all(|(i, &v)| v == 2 * i as u32), "chunks");
    let want = sums
        .iter()
        .enumerate()
        .all(|(c, &s)| s == (4 * c..(4 * c + 4).min(n)).map(|i| 2 * i as u32).sum::<u32>());
    assert!(want, "chunk sums");
    println!(
        "ok: regions mapped, reborrowed, preloaded, 2D and in chunks; a 2D launch of a 1D one refused"
    );
    Ok(())
}
