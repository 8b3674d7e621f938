//! `gpu::block_idx_grouped`: every block of a 2D grid gets a place of its own, whatever the
//! grid's shape and the rows of a group (a last group of fewer rows included), and the blocks
//! go down the first group's column before the next column.
//@ run: => h2d=4 d2h=4

#[allow(dead_code)]
#[path = "../kernels.rs"]
mod kernels;

fn main() -> Result<(), offload::Error> {
    // (rows, columns, rows a group) of the grid.
    for (height, width, rows) in [(13u32, 5u32, 4u32), (8, 8, 8), (64, 3, 16), (6, 7, 0)] {
        let mut places = vec![0u32; (height * width) as usize];
        offload::launch!(kernels::grouped_blocks, (width, height), 32, (rows, &mut places[..]))?;
        let mut sorted = places.clone();
        sorted.sort_unstable();
        let all: Vec<u32> = (1..=height * width).collect();
        assert_eq!(sorted, all, "{height} x {width} by {rows}: not every block once");
        let group = rows.clamp(1, height) as usize;
        for (i, y) in (0..group).enumerate() {
            assert_eq!(places[y * width as usize], i as u32 + 1, "block {i} of {height} x {width}");
        }
        if width > 1 {
            assert_eq!(places[1], group as u32 + 1, "{height} x {width}: the second column");
        }
    }
    println!("ok: grouped block orders");
    Ok(())
}
