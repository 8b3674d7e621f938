//! The workloads' kernels, written as a user writes them: safe Rust, slices and indices.

pub mod tensor;

use core::ops::{Add, AddAssign, Mul};

use offload::DeviceCopy;
use offload::gpu::{self, Matrix, MatrixMut, atomic, shared, shared_array, sync_threads, warp};

/// The floats of the workloads that run in both precisions: `f32` and `f64`.
pub trait Real:
    DeviceCopy
    + Copy
    + Default
    + Add<Output = Self>
    + AddAssign
    + Mul<Output = Self>
    + warp::WarpValue
    + atomic::AtomicAdd
{
    /// 1/4, exactly.
    const QUARTER: Self;
}

impl Real for f32 {
    const QUARTER: f32 = 0.25;
}

impl Real for f64 {
    const QUARTER: f64 = 0.25;
}

/// Adds every value into `total`: a grid-stride loop per thread, a warp's sum by shuffles, one
/// shared slot per warp (`shared = 32 * size_of::<T>()`), one atomic addition per block.
#[offload::kernel(instances(f32, f64))]
pub fn reduce_sum<T: Real>(values: &[T], total: &mut T) {
    let mut sum = T::default();
    let mut i = gpu::global_id_x();
    while i < values.len() {
        sum += values[i];
        i += gpu::global_size_x();
    }
    let sum = warp::sum(sum);
    let warps = shared::<T>();
    let (lane, warp) = (warp::lane_id(), gpu::thread_idx_x() / warp::WARP_SIZE);
    if lane == 0 {
        warps.write(warp, sum);
    }
    sync_threads();
    if warp == 0 {
        let sum = warp::sum(if lane < gpu::block_dim_x() / warp::WARP_SIZE {
            warps.read(lane)
        } else {
            T::default()
        });
        if lane == 0 {
            atomic::fetch_add(total, sum);
        }
    }
}

/// One Jacobi sweep of a `width x height` grid: each interior cell the mean of its four
/// neighbours, border cells copied (blocks of 32x8).
#[offload::kernel(instances(f32, f64))]
pub fn jacobi_step<T: Real>(width: u32, height: u32, src: &[T], dst: &mut [T]) {
    let (w, h) = (width as usize, height as usize);
    let (x, y) = (gpu::global_id_x(), gpu::global_id_y());
    if x >= w || y >= h {
        return;
    }
    let c = y * w + x;
    dst[c] = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
        src[c]
    } else {
        T::QUARTER * (src[c - w] + src[c + w] + src[c - 1] + src[c + 1])
    };
}

/// `c = a * b` for `n x n` row-major matrices, one thread per element of `c` (blocks of 16x16).
#[offload::kernel(fp_contract, instances(f32, f64))]
pub fn gemm_naive<T: Real>(n: u32, a: &[T], b: &[T], c: &mut [T]) {
    let n = n as usize;
    let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
    let (col, row) = (gpu::global_id_x(), gpu::global_id_y());
    if row < n && col < n {
        let (a_row, b_col) = (a.row(row), b.column(col));
        let mut acc = T::default();
        for k in 0..n {
            acc += a_row[k] * b_col[k];
        }
        c[row * n + col] = acc;
    }
}

/// Tiles of the blocked matrix product: each block of 256 threads computes a `BM x BN` tile
/// of `c`, stepping along `k` by `BK` through shared memory, each thread a `TM x TN` block of
/// the tile in registers.
const BM: usize = 128;
const BN: usize = 128;
const BK: usize = 8;
const TM: usize = 8;
const TN: usize = 8;
/// The shared memory of `sgemm_tiled`: `a`'s tile transposed (`BK x BM`), then `b`'s (`BK x BN`).
pub const SGEMM_TILED_SHARED: usize = (BK * BM + BK * BN) * 4;

/// `c = a * b` for `n x n` row-major matrices, `n` a multiple of 128: a grid of `n / 128` x
/// `n / 128` blocks of 256 threads, `shared = SGEMM_TILED_SHARED`.
#[offload::kernel(launch_bounds = 256, fp_contract)]
pub fn sgemm_tiled(n: u32, a: &[f32], b: &[f32], c: &mut [f32]) {
    let n = n as usize;
    let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
    let tiles = shared_array::<f32, { SGEMM_TILED_SHARED / 4 }>();
    let t = gpu::thread_idx_x();
    let (tx, ty) = (t % (BN / TN), t / (BN / TN));
    let (row0, col0) = (gpu::block_idx_y() * BM, gpu::block_idx_x() * BN);
    // What each thread copies of a step's tiles: 4 of `a`'s 128 x 8, 4 of `b`'s 8 x 128.
    let (a_row, a_col) = (t / 2, t % 2 * 4);
    let (b_row, b_col) = (t / 32, t % 32 * 4);
    let mut acc = [[0.0f32; TN]; TM];
    for k0 in (0..n).step_by(BK) {
        // Both parts read before either is stored, so that the two reads are in flight at once.
        let a_part: [f32; 4] = gpu::read_array(&a.row(row0 + a_row)[k0 + a_col..]);
        let b_part: [f32; 4] = gpu::read_array(&b.row(k0 + b_row)[col0 + b_col..]);
        for (j, &v) in a_part.iter().enumerate() {
            tiles.write((a_col + j) * BM + a_row, v);
        }
        tiles.write_array(BK * BM + b_row * BN + b_col, b_part);
        gpu::sync_threads();
        for k in 0..BK {
            let a_frag: [f32; TM] = tiles.read_array(k * BM + ty * TM);
            let b_frag: [f32; TN] = tiles.read_array(BK * BM + k * BN + tx * TN);
            for i in 0..TM {
                for j in 0..TN {
                    acc[i][j] += a_frag[i] * b_frag[j];
                }
            }
        }
        gpu::sync_threads();
    }
    let mut c = MatrixMut::new(c, n, n);
    for (i, acc_row) in acc.iter().enumerate() {
        c.row_mut(row0 + ty * TM + i)[col0 + tx * TN..][..TN].copy_from_slice(acc_row);
    }
}

/// Transposes the `width x height` matrix `input` into `output` through 32x32 tiles of shared
/// memory (`shared = 32 * 33 * 4`: a padded row against bank conflicts), blocks of 32x8.
#[offload::kernel(launch_bounds = (32, 8))]
pub fn transpose(width: u32, height: u32, input: &[f32], output: &mut [f32]) {
    const TILE: usize = 32;
    let tile = shared_array::<f32, { TILE * (TILE + 1) }>();
    let (w, h) = (width as usize, height as usize);
    let (input, mut output) = (Matrix::new(input, h, w), MatrixMut::new(output, w, h));
    let (tx, ty) = (gpu::thread_idx_x(), gpu::thread_idx_y());
    let (bx, by) = (gpu::block_idx_x() * TILE, gpu::block_idx_y() * TILE);
    for j in (0..TILE).step_by(8) {
        if let Some(&v) = input.get(by + ty + j, bx + tx) {
            tile.write((ty + j) * (TILE + 1) + tx, v);
        }
    }
    sync_threads();
    for j in (0..TILE).step_by(8) {
        if let Some(out) = output.get_mut(bx + ty + j, by + tx) {
            *out = tile.read(tx * (TILE + 1) + ty + j);
        }
    }
}

/// Counts `values` by their low 8 bits into 256 `bins`: each block counts into its shared
/// memory (`shared = 256 * 4`), then adds its counts to `bins`.
#[offload::kernel]
pub fn histogram(values: &[u32], bins: &mut [u32]) {
    let local = shared_array::<u32, 256>();
    let t = gpu::thread_idx_x();
    for i in (t..256).step_by(gpu::block_dim_x()) {
        local.write(i, 0);
    }
    sync_threads();
    let mut i = gpu::global_id_x();
    while i < values.len() {
        local.fetch_add((values[i] & 255) as usize, 1);
        i += gpu::global_size_x();
    }
    sync_threads();
    for i in (t..256).step_by(gpu::block_dim_x()) {
        atomic::fetch_add(&mut bins[i], local.read(i));
    }
}
