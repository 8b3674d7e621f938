//! Kernels shared by the run tests.

use offload::gpu::mma::{self, Tf32, Tf32x3};
use offload::{DeviceCopy, bf16, f16};

/// Scale and offset applied by `affine`.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Affine {
    pub scale: f32,
    pub offset: f32,
}

/// A generic `DeviceCopy` struct: its instantiations without padding (`Pair<u32, f32>`,
/// `Pair<f32, f32>`, `Pair<Pair<u32, f32>, u64>`) can be preloaded and passed to kernels.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Pair<A, B> {
    pub a: A,
    pub b: B,
}

/// `y = a * x + y`.
#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// `y = p.scale * y + p.offset`, the parameters read through a reference.
#[offload::kernel]
pub fn affine(p: &Affine, y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = p.scale * y[i] + p.offset;
    }
}

/// `y[i] += 1`.
#[offload::kernel]
pub fn increment(y: &mut [u32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] += 1;
    }
}

/// Takes scalars only: nothing to map.
#[offload::kernel]
pub fn scalars_only(a: f32, b: u64, c: i32) {
    let _ = (a, b, c);
}

/// `y[i] = 1`, bounds-checked: an index past the end panics, which traps on a GPU.
#[offload::kernel]
pub fn write_at(y: &mut [u32], i: u32) {
    y[i as usize] = 1;
}

/// `y = a + b`, from two slices read through shared references.
#[offload::kernel]
pub fn add(a: &[f32], b: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a[i] + b[i];
    }
}

/// `offload::gpu::math` on each `x[i]` and `w[i]`: ten results per `f32`, six per `f64`.
#[offload::kernel]
pub fn float_math(x: &[f32], w: &[f64], out: &mut [f32], out64: &mut [f64]) {
    use offload::gpu::math;
    let i = offload::gpu::global_id_x();
    if i < x.len() && i < w.len() {
        let (v, o) = (x[i], &mut out[i * 10..i * 10 + 10]);
        o[0] = math::sqrt(v.abs());
        o[1] = math::mul_add(v, 3.0, 0.5);
        o[2] = math::floor(v);
        o[3] = math::ceil(v);
        o[4] = math::trunc(v);
        o[5] = math::round(v);
        o[6] = math::fast_exp(v);
        o[7] = math::fast_ln(v.abs() + 1.0);
        o[8] = math::fast_sin(v);
        o[9] = math::fast_cos(v);
        let (v, o) = (w[i], &mut out64[i * 6..i * 6 + 6]);
        o[0] = math::sqrt(v.abs());
        o[1] = math::mul_add(v, 3.0, 0.5);
        o[2] = math::floor(v);
        o[3] = math::ceil(v);
        o[4] = math::trunc(v);
        o[5] = math::round(v);
    }
}

/// `y = p.a * (x.a + x.b) + p.b + n.a.a + n.a.b + n.b`: instantiations of a generic struct by
/// value, as a slice and nested, by reference.
#[offload::kernel]
pub fn pairs(
    p: Pair<f32, f32>,
    xs: &[Pair<u32, f32>],
    n: &Pair<Pair<u32, f32>, u64>,
    y: &mut [f32],
) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        let x = xs[i];
        y[i] = p.a * (x.a as f32 + x.b) + p.b + n.a.a as f32 + n.a.b + n.b as f32;
    }
}

/// `y = if flag { a } else { b }`: a `bool` taken by value.
#[offload::kernel]
pub fn select(flag: bool, a: f32, b: f32, y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = if flag { a } else { b };
    }
}

/// A weight that names a lifetime, for a kernel whose parameter types use its lifetime
/// parameter.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Weight<'a> {
    pub w: f32,
    pub _borrow: core::marker::PhantomData<&'a ()>,
}

/// `y += w * x`, with its lifetime parameter written out (and used by `Weight`).
#[offload::kernel]
pub fn accumulate<'a>(w: Weight<'a>, x: &'a [f32], y: &'a mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] += w.w * x[i];
    }
}

/// `y = x`, with two bounded lifetime parameters.
#[offload::kernel]
pub fn copy_into<'a, 'b: 'a>(x: &'a [f32], y: &'b mut [f32])
where
    'b: 'a,
{
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = x[i];
    }
}

/// `out[i] = window[i % window.len()] / sum(whole)`: two shared slices that may overlap.
#[offload::kernel]
pub fn normalise(window: &[f32], whole: &[f32], out: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < out.len() && !window.is_empty() {
        let mut sum = 0.0;
        for x in whole {
            sum += *x;
        }
        out[i] = window[i % window.len()] / sum;
    }
}

/// `y[i] = 7`: a parameter the kernel ignores (`_`), and an `#[inline]` of the user's, which
/// the kernel's entry point makes moot.
#[offload::kernel]
#[inline]
pub fn ignore_first(_: f32, y: &mut [u32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = 7;
    }
}

/// One `support::step` of `dt` per particle: a type and a function of a dependency of the
/// package, which the manifest names in `kernel-dependencies`.
#[offload::kernel]
pub fn advance(dt: f32, particles: &mut [support::Particle]) {
    if let Some(p) = particles.get_mut(offload::gpu::global_id_x()) {
        support::step(p, dt);
    }
}

/// Counts each value into `bins[value % bins.len()]`.
#[offload::kernel]
pub fn histogram(values: &[u32], bins: &mut [u32]) {
    if let Some(&v) = values.get(offload::gpu::global_id_x()) {
        let bin = v as usize % bins.len();
        offload::gpu::atomic::fetch_add(&mut bins[bin], 1);
    }
}

/// Adds every value into `total`, one atomic addition per thread.
#[offload::kernel]
pub fn sum_f32(values: &[f32], total: &mut f32) {
    if let Some(&v) = values.get(offload::gpu::global_id_x()) {
        offload::gpu::atomic::fetch_add(total, v);
    }
}

/// [`sum_f32`] in `f64`.
#[offload::kernel]
pub fn sum_f64(values: &[f64], total: &mut f64) {
    if let Some(&v) = values.get(offload::gpu::global_id_x()) {
        offload::gpu::atomic::fetch_add(total, v);
    }
}

/// The largest and the smallest value, and the sum of all in 64 bits.
#[offload::kernel]
pub fn extremes(values: &[i32], max: &mut i32, min: &mut i32, wide: &mut i64) {
    if let Some(&v) = values.get(offload::gpu::global_id_x()) {
        offload::gpu::atomic::fetch_max(max, v);
        offload::gpu::atomic::fetch_min(min, v);
        offload::gpu::atomic::fetch_add(wide, i64::from(v) << 32);
    }
}

/// Each thread takes a ticket from `counter`: `tickets` gets the values it returned.
#[offload::kernel]
pub fn tickets(counter: &mut u32, tickets: &mut [u32]) {
    let i = offload::gpu::global_id_x();
    if i < tickets.len() {
        tickets[i] = offload::gpu::atomic::fetch_add(counter, 1);
    }
}

/// Each thread of a grid along x, y and z marks the cell of an `nx` x `ny` x `nz` box it
/// covers with its coordinates and a count.
#[offload::kernel]
pub fn coordinates(nx: u32, ny: u32, cells: &mut [[u32; 4]]) {
    use offload::gpu::{global_id_x, global_id_y, global_id_z};
    let (x, y, z) = (global_id_x(), global_id_y(), global_id_z());
    let (nx, ny) = (nx as usize, ny as usize);
    if x < nx && y < ny && z < cells.len() / (nx * ny) {
        let cell = &mut cells[(z * ny + y) * nx + x];
        *cell = [x as u32, y as u32, z as u32, cell[3] + 1];
    }
}

/// `output` (`cols` x `rows`) is `input` (`rows` x `cols`) transposed: x along the columns, y
/// along the rows, as a 2D grid of 2D blocks.
#[offload::kernel]
pub fn transpose(rows: u32, cols: u32, input: &[f32], output: &mut [f32]) {
    let (col, row) = (offload::gpu::global_id_x(), offload::gpu::global_id_y());
    let (rows, cols) = (rows as usize, cols as usize);
    if row < rows && col < cols {
        output[col * rows + row] = input[row * cols + col];
    }
}

/// Each block's first thread writes the block's number in launch order (from 1) at the place
/// `gpu::block_idx_grouped(rows)` gives it, row-major in the grid.
#[offload::kernel]
pub fn grouped_blocks(rows: u32, places: &mut [u32]) {
    use offload::gpu::*;
    let (y, x) = block_idx_grouped(rows as usize);
    if thread_idx_x() == 0 {
        let launched = block_idx_y() * grid_dim_x() + block_idx_x();
        places[y * grid_dim_x() + x] = launched as u32 + 1;
    }
}

/// The first thread writes the launch's geometry as the kernel sees it: threads per block and
/// blocks in the grid, along x, y and z.
#[offload::kernel]
pub fn dimensions(out: &mut [u32; 6]) {
    use offload::gpu::*;
    // (An array's `==` compares through `memcmp`, which the library defines on nvptx.)
    let first = [thread_idx_x(), thread_idx_y(), thread_idx_z()] == [0; 3]
        && [block_idx_x(), block_idx_y(), block_idx_z()] == [0; 3];
    if first {
        let dims =
            [block_dim_x(), block_dim_y(), block_dim_z(), grid_dim_x(), grid_dim_y(), grid_dim_z()];
        for (o, d) in out.iter_mut().zip(dims) {
            *o = d as u32;
        }
    }
}

/// Whether row `i` of `a` equals row `i` of `b` (rows of `width` bytes), one thread a row: a
/// slice `==` of runtime length, which compiles to a call of `memcmp` or `bcmp`.
#[offload::kernel]
pub fn equal_rows(width: u32, a: &[u8], b: &[u8], equal: &mut [u32]) {
    let (i, w) = (offload::gpu::global_id_x(), width as usize);
    if i < equal.len() {
        equal[i] = u32::from(a[i * w..(i + 1) * w] == b[i * w..(i + 1) * w]);
    }
}

/// Each block's sum of its `values`, by halves in shared memory (`shared = block * 4` bytes),
/// with a barrier between the steps; block sizes are powers of two.
#[offload::kernel]
pub fn block_sums(values: &[f32], sums: &mut [f32]) {
    use offload::gpu::*;
    let partial = shared::<f32>();
    let t = thread_idx_x();
    partial.write(t, values.get(global_id_x()).copied().unwrap_or(0.0));
    let mut half = block_dim_x() / 2;
    while half > 0 {
        sync_threads();
        if t < half {
            partial.write(t, partial.read(t) + partial.read(t + half));
        }
        half /= 2;
    }
    if t == 0 {
        sums[block_idx_x()] = partial.read(0);
    }
}

/// Reverses each block's run of `values` through shared memory: every thread writes its
/// element, waits for the block, then reads its mirror's.
#[offload::kernel]
pub fn reverse_blocks(values: &mut [u32]) {
    use offload::gpu::*;
    let tile = shared::<u32>();
    let (t, n) = (thread_idx_x(), block_dim_x());
    let base = block_idx_x() * n;
    tile.write(t, values[base + t]);
    sync_threads();
    values[base + t] = tile.read(n - 1 - t);
}

/// Writes how many `u64`s its block's shared memory holds, from the first thread.
#[offload::kernel]
pub fn shared_len(out: &mut [u32; 1]) {
    if offload::gpu::global_id_x() == 0 {
        out[0] = offload::gpu::shared::<u64>().len() as u32;
    }
}

/// Counts `values` into `bins[value % bins.len()]`: first into the block's own bins in shared
/// memory (`shared = bins.len() * 4`), then once per bin into the device's.
#[offload::kernel]
pub fn block_histogram(values: &[u32], bins: &mut [u32]) {
    use offload::gpu::*;
    let local = shared::<u32>();
    let (t, n) = (thread_idx_x(), block_dim_x());
    let mut b = t;
    while b < bins.len() {
        local.write(b, 0);
        b += n;
    }
    sync_threads();
    if let Some(&v) = values.get(global_id_x()) {
        local.fetch_add(v as usize % bins.len(), 1);
    }
    sync_threads();
    let mut b = t;
    while b < bins.len() {
        atomic::fetch_add(&mut bins[b], local.read(b));
        b += n;
    }
}

/// Reverses the first `n` values of the one block through shared memory; the threads past `n`
/// return before the barrier, as GPU code does (`bar.sync` does not wait for exited threads).
#[offload::kernel]
pub fn reverse_first(n: u32, values: &mut [u32]) {
    use offload::gpu::*;
    let (t, n) = (thread_idx_x(), n as usize);
    if t >= n {
        return;
    }
    let tile = shared::<u32>();
    tile.write(t, values[t]);
    sync_threads();
    values[t] = tile.read(n - 1 - t);
}

/// Warp operations, a row of 8 results per thread (tests/run/src/bin/warp.rs): a sum by
/// `shuffle_down` (complete in lane 0) and a maximum by butterfly, of 64-bit values with both
/// halves set (negative for the sum); lane 3's `f64` (its bits); the values one lane up and
/// one down; a ballot, `any` and `all`.
#[offload::kernel]
pub fn warp_rows(rows: &mut [i64]) {
    use offload::gpu::{global_id_x, warp};
    let t = global_id_x();
    let lane = warp::lane_id();
    let mut sum = -(((t as i64) << 33) | t as i64);
    for offset in [16, 8, 4, 2, 1] {
        sum += warp::shuffle_down(sum, offset);
    }
    let mut max = ((t as u64) << 35) | (1000 - t as u64);
    for mask in [16, 8, 4, 2, 1] {
        max = max.max(warp::shuffle_xor(max, mask));
    }
    let row = [
        sum,
        max as i64,
        warp::shuffle(t as f64 * 0.1, 3).to_bits() as i64,
        warp::shuffle_up(t as i32 - 100, 1) as i64,
        warp::shuffle_down(t as u32, 1) as i64,
        warp::ballot(t % 3 == 0) as i64,
        warp::any(t % 64 == 5) as i64,
        warp::all(lane < 32) as i64 + 2 * warp::all(lane < 31) as i64,
    ];
    if let Some(out) = rows.get_mut(t * 8..t * 8 + 8) {
        out.copy_from_slice(&row);
    }
}

/// Only the odd blocks wait (tests/run/src/bin/some_blocks_wait.rs): an even block's threads
/// write their global index; an odd block's first `skip` threads return, the others count
/// themselves in `arrived[block]`, meet at a barrier and write the count they see there, and
/// the threads of its third warp (all of them there) sum their global indices by
/// `shuffle_down`.
#[offload::kernel]
pub fn odd_blocks_wait(skip: u32, arrived: &mut [u32], out: &mut [u64]) {
    use offload::gpu::{atomic, block_idx_x, global_id_x, sync_threads, thread_idx_x, warp};
    let (t, b, i) = (thread_idx_x(), block_idx_x(), global_id_x());
    let Some(row) = out.get_mut(2 * i..2 * i + 2) else { return };
    if b % 2 == 0 {
        row.copy_from_slice(&[i as u64, 0]);
        return;
    }
    if t < skip as usize {
        return;
    }
    let Some(count) = arrived.get_mut(b) else { return };
    atomic::fetch_add(count, 1);
    sync_threads();
    let seen = atomic::fetch_add(count, 0);
    let mut sum = 0;
    if t >= 64 {
        sum = i as u64;
        for offset in [16, 8, 4, 2, 1] {
            sum += warp::shuffle_down(sum, offset);
        }
    }
    row.copy_from_slice(&[seen as u64, sum]);
}

/// Each thread makes `depth` nested calls of 1 KiB of stack each (`first` in block 0) and
/// writes that depth plus its global index (tests/run/src/bin/kernel_stack.rs); with `wait`,
/// the block's threads meet at a barrier first.
#[offload::kernel]
pub fn stack_depth(depth: u32, first: u32, wait: u32, out: &mut [u32]) {
    use offload::gpu::{block_idx_x, global_id_x, sync_threads};
    if wait != 0 {
        sync_threads();
    }
    let i = global_id_x();
    let depth = if block_idx_x() == 0 { first } else { depth };
    if let Some(slot) = out.get_mut(i) {
        *slot = nested_frames(depth, i as u32);
    }
}

/// `depth + seed`, from `depth` nested calls, each with a 1 KiB array the compiler must keep
/// (an element at an index it cannot know is written and read back through volatile accesses).
#[inline(never)]
fn nested_frames(depth: u32, seed: u32) -> u32 {
    let mut frame = [0u32; 256];
    let slot = &mut frame[(depth & 255) as usize];
    // SAFETY: an element of a local array.
    unsafe { core::ptr::write_volatile(slot, seed) };
    let below = if depth == 0 { seed } else { nested_frames(depth - 1, seed) + 1 };
    // SAFETY: as above. The element read back is `seed`: the sum is `below`.
    below + (unsafe { core::ptr::read_volatile(slot) } ^ seed)
}

/// Transposes the `width x height` matrix `input` into `output` through 32x32 shared tiles
/// (tests/run/src/bin/kernel_options.rs): a kernel of launch bounds along x and y, matrix views
/// and a shared array (`shared = 32 * 33 * 4`), as the workload benchmark's.
#[offload::kernel(launch_bounds = (32, 8))]
pub fn tile_transpose(width: u32, height: u32, input: &[f32], output: &mut [f32]) {
    use offload::gpu::{Matrix, MatrixMut, block_idx_x, block_idx_y, shared_array, sync_threads};
    use offload::gpu::{thread_idx_x, thread_idx_y};
    let tile = shared_array::<f32, { 32 * 33 }>();
    let (w, h) = (width as usize, height as usize);
    let (input, mut output) = (Matrix::new(input, h, w), MatrixMut::new(output, w, h));
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (bx, by) = (block_idx_x() * 32, block_idx_y() * 32);
    for j in (0..32).step_by(8) {
        if let Some(&v) = input.get(by + ty + j, bx + tx) {
            tile.write((ty + j) * 33 + tx, v);
        }
    }
    sync_threads();
    for j in (0..32).step_by(8) {
        if let Some(out) = output.get_mut(bx + ty + j, by + tx) {
            *out = tile.read(tx * 33 + ty + j);
        }
    }
}

/// `c = a * b` for `n x n` matrices, one thread per element, through matrix views, with fused
/// multiply-adds (tests/run/src/bin/kernel_options.rs).
#[offload::kernel(launch_bounds = 256, fp_contract)]
pub fn matrix_product(n: u32, a: &[f32], b: &[f32], c: &mut [f32]) {
    use offload::gpu::{Matrix, MatrixMut, global_id_x, global_id_y};
    let n = n as usize;
    let (a, b, mut c) = (Matrix::new(a, n, n), Matrix::new(b, n, n), MatrixMut::new(c, n, n));
    let (col, row) = (global_id_x(), global_id_y());
    if row < n && col < n {
        let (a_row, b_col) = (a.row(row), b.column(col));
        c[(row, col)] = (0..n).map(|k| a_row[k] * b_col[k]).sum();
    }
}

/// Reverses each group of four values through the block's shared memory, four at a time
/// (`shared = block * 4 * 4`; tests/run/src/bin/kernel_options.rs).
#[offload::kernel]
pub fn reverse_fours(values: &mut [f32]) {
    use offload::gpu::{global_id_x, shared, sync_threads, thread_idx_x};
    let fours = shared::<f32>();
    let (t, i) = (thread_idx_x(), global_id_x());
    if let Some(four) = values.get(4 * i..4 * i + 4) {
        let [a, b, c, d]: [f32; 4] = four.try_into().unwrap();
        fours.write_array(4 * t, [d, c, b, a]);
    }
    sync_threads();
    if let Some(four) = values.get_mut(4 * i..4 * i + 4) {
        four.copy_from_slice(&fours.read_array::<4>(4 * t));
    }
}

/// `y = a * x + y` over each element type its instances list: one entry point per instance in
/// every device image (`axpy__f32`, `axpy__f64`, `axpy__i32`).
#[offload::kernel(instances(f32, f64, i32))]
pub fn axpy<T: DeviceCopy + Copy + core::ops::Mul<Output = T> + core::ops::Add<Output = T>>(
    a: T,
    x: &[T],
    y: &mut [T],
) {
    let i = offload::gpu::global_id_x();
    if i < y.len() && i < x.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Thread `i` sums the `TILE` values from `i * TILE`: the tile size a constant of the instance.
#[offload::kernel(instances(4, 32))]
pub fn tile_sums<const TILE: usize>(values: &[u32], sums: &mut [u32]) {
    let i = offload::gpu::global_id_x();
    if let Some(sum) = sums.get_mut(i) {
        let mut total = 0u32;
        for k in 0..TILE {
            total = total.wrapping_add(values.get(i * TILE + k).copied().unwrap_or(0));
        }
        *sum = total;
    }
}

/// `y[i] = x[i] * x[i]`, declared with upstream's name for the attribute (`offload_kernel`) and
/// launched with `offload!` (upstream_names.rs).
#[offload::offload_kernel]
pub fn square(x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < x.len() && i < y.len() {
        y[i] = x[i] * x[i];
    }
}

/// `c += a * b` on the tensor cores for `n x n` row-major matrices (`n` a multiple of 16),
/// fragments read straight from device memory: a warp per 16 x 8 tile of `c` (blocks of 32
/// threads, a grid of `n / 8` x `n / 16`), in steps of the kind's depth.
#[offload::kernel(instances(bf16, f16, Tf32, Tf32x3, f64))]
pub fn mma_direct<E: mma::Kind>(n: u32, a: &[E::Elem], b: &[E::Elem], c: &mut [E::Acc]) {
    use offload::gpu::{Matrix, MatrixMut, block_idx_x, block_idx_y};
    let n = n as usize;
    let (a, b, mut c) = (Matrix::new(a, n, n), Matrix::new(b, n, n), MatrixMut::new(c, n, n));
    let (row, col) = (block_idx_y() * mma::M, block_idx_x() * mma::N);
    let mut acc = mma::Accumulator::<E>::load(&c.as_matrix(), row, col);
    for k in (0..n).step_by(E::K) {
        mma::mma(&mma::FragmentA::load(&a, row, k), &mma::FragmentB::load(&b, k, col), &mut acc);
    }
    acc.store(&mut c, row, col);
}

/// `c = a * b` through shared memory for `n x n` row-major matrices (`n` a multiple of 32):
/// blocks of 4 warps (128 threads) compute 32 x 32 tiles of `c`, a warp 16 x 16 (two
/// accumulators), stepping along k by 32 through two stages of shared tiles filled by
/// `copy_async_from` in pieces of `CHUNK` elements (16 bytes), rows padded by a piece. A is
/// loaded with `ldmatrix`; B with `ldmatrix.trans` (16-bit kinds) or element loads; odd warps
/// read B through its transpose, written to a fifth tile, to test `load_shared_transposed`
/// (`shared` = 5 tiles of 32 x (32 + CHUNK) elements). Each lane then writes its values as
/// `entries` gives them, scaled by `alpha` with `map`.
#[offload::kernel(
    launch_bounds = 128,
    instances((bf16, 8), (f16, 8), (Tf32, 4), (Tf32x3, 4), (f64, 2))
)]
pub fn mma_shared<E: mma::Kind, const CHUNK: usize>(
    n: u32,
    alpha: f32,
    a: &[E::Elem],
    b: &[E::Elem],
    c: &mut [E::Acc],
) where
    E::Acc: From<f32> + core::ops::Mul<Output = E::Acc>,
{
    use offload::gpu::{
        Matrix, async_copy, block_idx_x, block_idx_y, shared, sync_threads, thread_idx_x,
    };
    const T: usize = 32;
    let n = n as usize;
    let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
    let stride = T + CHUNK;
    let tiles = shared::<E::Elem>();
    // Stage `s`: A's 32 x 32 tile, then B's; B's transpose after both stages.
    let tile = |i: usize| tiles.matrix(i * T * stride, T, T, stride);
    let transposed = tile(4);
    let t = thread_idx_x();
    let warp = t / 32;
    let (wr, wc) = (warp / 2 * 16, warp % 2 * 16);
    let (row0, col0) = (block_idx_y() * T, block_idx_x() * T);
    let fill = |s: usize, k0: usize| {
        tile(2 * s).copy_async_from::<CHUNK>(&a, row0, k0, t, 128);
        tile(2 * s + 1).copy_async_from::<CHUNK>(&b, k0, col0, t, 128);
        async_copy::commit();
    };
    let mut acc = [mma::Accumulator::<E>::zero(); 2];
    fill(0, 0);
    let steps = n / T;
    for step in 0..steps {
        if step + 1 < steps {
            fill((step + 1) % 2, (step + 1) * T);
        }
        async_copy::wait(if step + 1 < steps { 1 } else { 0 });
        sync_threads();
        let (at, bt) = (tile(step % 2 * 2), tile(step % 2 * 2 + 1));
        for i in (t..T * T).step_by(128) {
            let (k, j) = (i / T, i % T);
            transposed.write(j, k, bt.read(k, j));
        }
        sync_threads();
        for k in (0..T).step_by(E::K) {
            let fa = mma::FragmentA::<E>::load_shared(&at, wr, k);
            let fb = if warp % 2 == 0 {
                mma::FragmentB::load_shared_pair(&bt, k, wc)
            } else {
                [
                    mma::FragmentB::load_shared_transposed(&transposed, wc, k),
                    mma::FragmentB::load_shared_transposed(&transposed, wc + 8, k),
                ]
            };
            mma::mma(&fa, &fb[0], &mut acc[0]);
            mma::mma(&fa, &fb[1], &mut acc[1]);
        }
        sync_threads();
    }
    for (j, acc) in acc.iter().enumerate() {
        for (r, k, v) in acc.map(|v| v * E::Acc::from(alpha)).entries() {
            c[(row0 + wr + r) * n + col0 + wc + 8 * j + k] = v;
        }
    }
}

/// `c = a * b` on the warpgroups' `wgmma` (or, outside sm_90a images, their warps'
/// `mma.sync`), `a` `m x k`, `b` `k x n`, row-major, `c` in f32: blocks of two warpgroups over
/// `128 x 8 C` tiles of `c`, k-tiles of `BK` (64, or 128: two panels of A's tile) in two stages
/// of `wgmma::Tile`s, each multiplied in `SPLIT` calls of `BK / SPLIT` (k-steps from inside a
/// row of A's tile, and further down B's). A grid of `n / (8 C)` x `m / 128`, 256 threads,
/// `shared = 2 * (128 + 8 C) * BK * 2` bytes.
#[offload::kernel(
    launch_bounds = 256,
    instances((bf16, 8, 64, 1), (bf16, 16, 64, 2), (bf16, 32, 64, 4), (f16, 16, 128, 1))
)]
pub fn wgmma_gemm<
    E: offload::gpu::wgmma::Half,
    const C: usize,
    const BK: usize,
    const SPLIT: usize,
>(
    m: u32,
    n: u32,
    k: u32,
    a: &[E],
    b: &[E],
    c: &mut [f32],
) {
    use offload::gpu::wgmma::{self, Tile};
    use offload::gpu::{
        Matrix, MatrixMut, async_copy, block_idx_x, block_idx_y, shared, sync_threads, thread_idx_x,
    };
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (a, b) = (Matrix::new(a, m, k), Matrix::new(b, k, n));
    let tiles = shared::<E>();
    let stage = (128 + 8 * C) * BK;
    let a_tile = |s: usize| Tile::new(&tiles, s * stage, 128, BK);
    let b_tile = |s: usize| Tile::new(&tiles, s * stage + 128 * BK, BK, 8 * C);
    let t = thread_idx_x();
    let group = t / 128;
    let (row0, col0) = (block_idx_y() * 128, block_idx_x() * 8 * C);
    let fill = |s: usize, k0: usize| {
        a_tile(s).copy_async_from::<8>(&a, row0, k0, t, 256);
        b_tile(s).copy_async_from::<8>(&b, k0, col0, t, 256);
        async_copy::commit();
    };
    let mut acc = [mma::Accumulator::<E>::zero(); C];
    fill(0, 0);
    let steps = k / BK;
    for step in 0..steps {
        if step + 1 < steps {
            fill((step + 1) % 2, (step + 1) * BK);
        }
        async_copy::wait(if step + 1 < steps { 1 } else { 0 });
        sync_threads();
        let (at, bt) = (a_tile(step % 2), b_tile(step % 2));
        let depth = BK / SPLIT;
        for part in 0..SPLIT {
            let a = at.block(64 * group, part * depth, 64, depth);
            wgmma::mma(&a, &bt.block(part * depth, 0, depth, 8 * C), &mut acc);
        }
        sync_threads();
    }
    wgmma::store(&acc, &mut MatrixMut::new(c, m, n), row0 + 64 * group, col0);
}

/// Each thread's element of `region` (`Linear1D`: along x), set to `value` plus its index.
#[offload::kernel]
pub fn fill_region(region: offload::Region<'_, f32, offload::region::Linear1D>, value: f32) {
    let mut region = region;
    let i = offload::gpu::global_id_x();
    if let Some(x) = region.get_mut() {
        *x = value + i as f32;
    }
}

/// A 2D launch over rows of 16: element `y * 16 + x` gets `y * 100 + x`.
#[offload::kernel]
pub fn fill_rows(mut grid: offload::Region<'_, u32, offload::region::Linear2D<16>>) {
    let (x, y) = (offload::gpu::global_id_x(), offload::gpu::global_id_y());
    if let Some(cell) = grid.get_mut() {
        *cell = (y * 100 + x) as u32;
    }
}

/// A strategy of the program's own: each thread gets `N` consecutive elements, a `&mut [T]`
/// (the last thread fewer).
pub struct Chunks<const N: usize>;

// SAFETY: along x alone, thread `i`'s chunk `[i * N, i * N + N)` is its own.
unsafe impl<const N: usize> offload::PartitioningStrategy for Chunks<N> {
    type View<'a, T: 'a> = &'a [T];
    type ViewMut<'a, T: 'a> = &'a mut [T];

    fn index() -> usize {
        offload::gpu::global_id_x() * N
    }

    unsafe fn get<'a, T>(ptr: core::ptr::NonNull<T>, len: usize) -> Option<&'a [T]> {
        let start = Self::index();
        (start < len).then(|| unsafe {
            core::slice::from_raw_parts(ptr.as_ptr().add(start), N.min(len - start))
        })
    }

    unsafe fn get_mut<'a, T>(ptr: core::ptr::NonNull<T>, len: usize) -> Option<&'a mut [T]> {
        let start = Self::index();
        (start < len).then(|| unsafe {
            core::slice::from_raw_parts_mut(ptr.as_ptr().add(start), N.min(len - start))
        })
    }

    fn check_launch(
        _len: usize,
        grid: [u32; 3],
        block: [u32; 3],
    ) -> Result<(), offload::LaunchError> {
        if N == 0 || grid[1..] != [1, 1] || block[1..] != [1, 1] {
            return Err(offload::LaunchError::new("Chunks needs N > 0 and a launch along x"));
        }
        Ok(())
    }
}

/// Doubles each thread's chunk of four and writes the chunk's sum at its first element's
/// place in `sums` (read back through `Region::get`).
#[offload::kernel]
pub fn double_chunks(mut values: offload::Region<'_, u32, Chunks<4>>, sums: &mut [u32]) {
    let i = offload::gpu::global_id_x();
    if let Some(chunk) = values.get_mut() {
        for v in chunk.iter_mut() {
            *v *= 2;
        }
    }
    if let Some(chunk) = values.get()
        && i < sums.len()
    {
        sums[i] = chunk.iter().sum();
    }
}

/// Kernels as upstream's programs write them, each named after the upstream file it follows
/// (tests/codegen-llvm/gpu_offload/ of rust-lang/rust): private functions, `#[no_mangle]`,
/// the `gpu-kernel` ABI, `-> ()`, and `core::arch::nvptx`'s indices through `offload::arch`.
/// Only the raw pointers upstream's take are references here (see docs/UPSTREAM.md).
pub mod upstream {
    use offload::arch::nvptx::{_block_dim_x, _block_idx_x, _thread_idx_x};
    use offload::region::Linear1D;
    use offload::{Region, offload_kernel};

    /// gpu_host.rs's `_kernel_1` (and offload_intrinsic.rs's `_kernel`).
    #[offload_kernel]
    #[unsafe(no_mangle)]
    #[allow(clippy::needless_range_loop)]
    fn _kernel_1(x: &mut [f32; 256]) {
        for i in 0..256 {
            x[i] = 21.0;
        }
    }

    /// control_flow.rs's `foo`, which reads `A` (upstream: a `*const [f32; 6]`); its thread 0
    /// adds the sum to `total`, so that the launches show.
    #[offload_kernel]
    extern "gpu-kernel" fn control_flow_foo(a: &[f32; 6], total: &mut f32) -> () {
        // SAFETY: none needed (upstream's are `unsafe`).
        let i = unsafe { _thread_idx_x() + _block_idx_x() * _block_dim_x() };
        if i == 0 {
            *total += a.iter().sum::<f32>();
        }
    }

    /// scalar_host.rs's `foo(x: *mut f32, k: f32)`.
    #[offload_kernel]
    fn scalar_foo(x: &mut f32, k: f32) {
        *x = k;
    }

    /// slice_host.rs's `foo(x: &mut [f32])`.
    #[offload_kernel]
    fn slice_foo(x: &mut [f32]) {
        for (i, v) in x.iter_mut().enumerate() {
            *v = i as f32;
        }
    }

    /// region_host.rs's `foo(region: Region<'_, f32, Dummy>)`, with a strategy that exists.
    #[offload_kernel]
    fn region_foo(mut region: Region<'_, f32, Linear1D>) {
        if let Some(x) = region.get_mut() {
            *x += 1.0;
        }
    }

    /// device_check.rs's `kernel()`.
    #[offload_kernel]
    #[unsafe(no_mangle)]
    fn kernel() {}

    /// core::offload's documentation example (upstream: `x: *mut [f64; 256]`).
    #[offload_kernel]
    fn doc_kernel(x: &mut [f64; 256]) {
        let n = x.len();
        // SAFETY: none needed (upstream's are `unsafe`).
        let i = unsafe { (_thread_idx_x() + _block_idx_x() * _block_dim_x()) as usize };
        if i < n {
            x[i] = i as f64;
        }
    }
}
