//! Jacobi relaxation of a heated plate split by rows over MPI ranks, each rank on its own
//! device (GPU `rank % GPUs`, or the host plugin's devices where there is no GPU). Each rank
//! keeps its rows preloaded for the whole run, with a halo row on each side it has a
//! neighbour; between steps only the rows next to a neighbour travel: `sync_range` copies a
//! rank's edge row back, MPI sends it, and `update_range` copies the neighbour's into the halo.
//! The mean temperature is a distributed reduction: each rank sums its rows by a kernel on
//! the preloaded data, then `MPI_Allreduce`. Rank 0 gathers the plate and checks it against
//! one process's computation on the CPU, bit for bit: the split changes nothing.
//!
//! `mpirun -np RANKS jacobi_mpi [WIDTH] [HEIGHT] [ITERATIONS]`
//!
//! Copies, all ranks together, for a 64 x 48 plate (8 bytes a cell) and 10 steps: two buffers
//! of each rank's rows and halos in and back (2 x 48 x 64 x 8 = 49152 bytes, plus a row a
//! neighbour), each edge between ranks two rows each way a step (1024 bytes), and each rank's
//! partial sum in and back (8 bytes).
//@ run: 64 48 10 => h2d=3 d2h=3 h2d_bytes=49160 d2h_bytes=49160 np=1
//@ run: 64 48 10 => h2d=26 d2h=26 h2d_bytes=61456 d2h_bytes=61456 np=2
//@ run: 64 48 10 => h2d=72 d2h=72 h2d_bytes=86048 d2h_bytes=86048 np=4

mod kernels;

use std::ops::Range;
use std::time::{Duration, Instant};

use mpi::collective::SystemOperation;
use mpi::point_to_point::send_receive_into;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use offload::{Device, PreloadMut};

/// The plate's initial temperature: 100 degrees along the top edge, 0 elsewhere.
fn initial(width: usize, rows: Range<usize>) -> Vec<f64> {
    rows.flat_map(|row| std::iter::repeat_n(if row == 0 { 100.0 } else { 0.0 }, width)).collect()
}

/// The plate's rows rank `rank` of `ranks` owns: as equal as whole rows allow.
fn owned(height: usize, rank: usize, ranks: usize) -> Range<usize> {
    height * rank / ranks..height * (rank + 1) / ranks
}

/// One rank's part: which rows its buffers hold, and its neighbours.
struct Part {
    width: usize,
    /// The plate's rows this rank computes.
    own: Range<usize>,
    /// The plate's row of the buffers' row 0: the halo row above, where there is a neighbour.
    first: usize,
    above: Option<i32>,
    below: Option<i32>,
}

impl Part {
    fn new(width: usize, height: usize, rank: usize, ranks: usize) -> Part {
        let own = owned(height, rank, ranks);
        let above = (rank > 0).then(|| rank as i32 - 1);
        let below = (rank + 1 < ranks).then(|| rank as i32 + 1);
        Part { width, first: own.start - usize::from(above.is_some()), own, above, below }
    }

    /// The plate's rows the buffers hold: the rank's own and its halos.
    fn held(&self) -> Range<usize> {
        self.first..self.own.end + usize::from(self.below.is_some())
    }

    /// The buffers' elements of the plate's row `row`.
    fn row(&self, row: usize) -> Range<usize> {
        let local = row - self.first;
        local * self.width..(local + 1) * self.width
    }

    /// The buffers' elements of the rank's own rows.
    fn own_cells(&self) -> Range<usize> {
        self.row(self.own.start).start..self.row(self.own.end - 1).end
    }

    /// The halo exchange after a step: each edge row to the neighbour beside it, the
    /// neighbour's edge row into the halo. Even ranks trade with the rank below first, odd
    /// ranks with the rank above, so every pair meets in one of two rounds, whatever the
    /// number of ranks.
    fn exchange(&self, world: &SimpleCommunicator, grid: &mut PreloadMut<'_, [f64]>, rank: usize) {
        let mut halo = vec![0.0f64; self.width];
        let (above, below) =
            (self.above.map(|r| (r, self.own.start)), self.below.map(|r| (r, self.own.end - 1)));
        let rounds = if rank.is_multiple_of(2) { [below, above] } else { [above, below] };
        for (peer, edge) in rounds.into_iter().flatten() {
            let peer = world.process_at_rank(peer);
            let sent = grid.sync_range(self.row(edge)); // one row back
            send_receive_into(sent, &peer, &mut halo[..], &peer);
            let halo_row = if edge == self.own.start { edge - 1 } else { edge + 1 };
            grid.update_range(self.row(halo_row), |row| row.copy_from_slice(&halo)); // one row in
        }
    }
}

/// The CPU's Jacobi step over a whole plate, the reference.
fn step_on_cpu(w: usize, h: usize, src: &[f64], dst: &mut [f64]) {
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
    let universe = mpi::initialize().expect("MPI initialised twice");
    let world = universe.world();
    let (rank, ranks) = (world.rank() as usize, world.size() as usize);
    let arg = |i: usize, default: usize| {
        std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
    };
    let (width, height, iterations) = (arg(1, 512), arg(2, 512), arg(3, 200));
    if height < 3 * ranks {
        if rank == 0 {
            eprintln!(
                "jacobi_mpi: {height} rows for {ranks} ranks: each rank needs 3 rows or more"
            );
        }
        std::process::exit(2);
    }
    let part = Part::new(width, height, rank, ranks);
    let device = Device::get(rank % Device::count())?;
    // The buffers' rows the kernel computes: the rank's own.
    let (begin, end) = ((part.own.start - part.first) as u32, (part.own.end - part.first) as u32);
    let (w, h, first) = (width as u32, height as u32, part.first as u32);
    let threads = (16u32, 16u32);
    let blocks = ((width as u32).div_ceil(16), (part.own.len() as u32).div_ceil(16));

    let mut a = initial(width, part.held());
    let mut b = a.clone();
    let mut partial = 0.0f64;
    // Steps after the first (which loads the kernels): their time, and the halo exchange's
    // share of it (the copies and MPI, after the step's kernel has finished).
    let (steps, mut exchange);
    exchange = Duration::ZERO;
    {
        let mut da = device.preload_mut(&mut a[..])?;
        let mut db = device.preload_mut(&mut b[..])?;
        world.barrier();
        let mut started = Instant::now();
        for i in 0..iterations {
            if i == 1 {
                world.barrier();
                started = Instant::now();
            }
            let (src, dst) = if i % 2 == 0 { (&da, &mut db) } else { (&db, &mut da) };
            offload::launch_async!(
                on & device,
                kernels::jacobi_rows,
                blocks,
                threads,
                (w, h, first, begin, end, src, &mut *dst)
            )?;
            device.synchronize()?;
            let computed = Instant::now();
            part.exchange(&world, dst, rank);
            if i > 0 {
                exchange += computed.elapsed();
            }
        }
        steps = started.elapsed();
        // The rank's share of the mean: a kernel over its own rows, still on the device.
        let last = if iterations % 2 == 0 { &da } else { &db };
        offload::launch!(
            on & device,
            kernels::sum,
            64,
            256,
            shared = 256 / 32 * 8,
            (&last.slice(part.own_cells()), &mut partial)
        )?;
    } // both buffers come back here
    let mut total = 0.0f64;
    world.all_reduce_into(&partial, &mut total, SystemOperation::sum());
    let mut slowest = [0.0f64; 2];
    world.all_reduce_into(
        &[steps.as_secs_f64(), exchange.as_secs_f64()][..],
        &mut slowest[..],
        SystemOperation::max(),
    );
    let result = if iterations % 2 == 0 { &a } else { &b };

    // The plate on rank 0, each rank's own rows from it.
    let root = world.process_at_rank(0);
    if rank != 0 {
        root.send(&result[part.own_cells()]);
        return Ok(());
    }
    let mut plate = vec![0.0f64; width * height];
    plate[..part.own.len() * width].copy_from_slice(&result[part.own_cells()]);
    for other in 1..ranks {
        let rows = owned(height, other, ranks);
        world
            .process_at_rank(other as i32)
            .receive_into(&mut plate[rows.start * width..rows.end * width]);
    }

    let mut ra = initial(width, 0..height);
    let mut rb = ra.clone();
    for i in 0..iterations {
        if i % 2 == 0 {
            step_on_cpu(width, height, &ra, &mut rb)
        } else {
            step_on_cpu(width, height, &rb, &mut ra)
        }
    }
    let reference = if iterations % 2 == 0 { &ra } else { &rb };
    let differing = plate.iter().zip(reference).filter(|(x, y)| x != y).count();
    let expected: f64 = reference.iter().sum();
    let per_step = |s: f64| s * 1e3 / iterations.saturating_sub(1).max(1) as f64;
    let timed = if iterations > 1 { "after the first" } else { "the only one, kernels loading" };
    println!(
        "jacobi_mpi {width}x{height}, {iterations} iterations over {ranks} rank(s), rank 0 on {}: {:.4} ms a step \
         ({timed}), of which halo exchange {:.4} ms; mean temperature {:.6} (CPU {:.6}); {differing} cells differ from one process on the CPU",
        device.name(),
        per_step(slowest[0]),
        per_step(slowest[1]),
        total / plate.len() as f64,
        expected / plate.len() as f64,
    );
    if differing != 0 || (total - expected).abs() > 1e-9 * expected.abs().max(1.0) {
        eprintln!("jacobi_mpi: the result differs from one process's");
        std::process::exit(1);
    }
    Ok(())
}
