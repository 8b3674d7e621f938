//! The tensor-core workloads' kernels, written as a user writes them: safe Rust over
//! `offload::gpu::mma` (`ldmatrix` loads of shared tiles and `copy_async`) and
//! `offload::gpu::wgmma`.

use offload::gpu::async_copy;
use offload::gpu::mma::{self, Accumulator, FragmentA, FragmentB, Kind, Tf32, Tf32x3};
use offload::gpu::wgmma::{self, Tile};
use offload::gpu::{self, Matrix, MatrixMut, shared, shared_array, sync_threads};
use offload::{bf16, f16};

/// The tiles of `bf16_wmma_tiles`, the anchor's WMMA kernel: 128 x 128 x 32 block tiles, rows
/// padded by 8 elements.
const WBM: usize = 128;
const WBN: usize = 128;
const WBK: usize = 32;
const WPA: usize = WBK + 8;
const WPB: usize = WBN + 8;
/// The shared memory of `bf16_wmma_tiles`: A's tile, then B's.
pub const BF16_WMMA_SHARED: usize = (WBM * WPA + WBK * WPB) * 2;

/// `c = a * b` for `n x n` row-major bf16 matrices into f32, `n` a multiple of 128: the
/// algorithm of the anchor's WMMA kernel (blocks of 8 warps over 128 x 128 tiles of `c`, each
/// warp 64 x 32; A and B staged through shared memory 32 deep by 16-byte loads and stores, no
/// pipelining), on `mma.sync`. A grid of `n / 128` x `n / 128`, `shared = BF16_WMMA_SHARED`.
#[offload::kernel(launch_bounds = 256)]
pub fn bf16_wmma_tiles(n: u32, a: &[bf16], b: &[bf16], c: &mut [f32]) {
    let n = n as usize;
    let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
    let tiles = shared_array::<bf16, { WBM * WPA + WBK * WPB }>();
    let (a_tile, b_tile) = (tiles.matrix(0, WBM, WBK, WPA), tiles.matrix(WBM * WPA, WBK, WBN, WPB));
    let t = gpu::thread_idx_x();
    let (wm, wn) = (t / 32 / 4 * 64, t / 32 % 4 * 32);
    let (row0, col0) = (gpu::block_idx_y() * WBM, gpu::block_idx_x() * WBN);
    let mut acc = [[Accumulator::<bf16>::zero(); 4]; 4];
    for k0 in (0..n).step_by(WBK) {
        // 512 vectors of 8 of each tile, two a thread: all four read before any is stored.
        let (ar, br) = (|i: usize| (t + 256 * i) / 4, |i: usize| (t + 256 * i) / 16);
        let (ac, bc) = (t % 4 * 8, t % 16 * 8);
        let parts: [[bf16; 8]; 4] = [
            gpu::read_array(&a.row(row0 + ar(0))[k0 + ac..]),
            gpu::read_array(&a.row(row0 + ar(1))[k0 + ac..]),
            gpu::read_array(&b.row(k0 + br(0))[col0 + bc..]),
            gpu::read_array(&b.row(k0 + br(1))[col0 + bc..]),
        ];
        tiles.write_array(ar(0) * WPA + ac, parts[0]);
        tiles.write_array(ar(1) * WPA + ac, parts[1]);
        tiles.write_array(WBM * WPA + br(0) * WPB + bc, parts[2]);
        tiles.write_array(WBM * WPA + br(1) * WPB + bc, parts[3]);
        sync_threads();
        // This warp's rows of A and columns of B.
        let (a_warp, b_warp) = (a_tile.block(wm, 0, 64, WBK), b_tile.block(0, wn, WBK, 32));
        for k in (0..WBK).step_by(16) {
            let fa: [FragmentA<bf16>; 4] =
                core::array::from_fn(|i| FragmentA::load_shared(&a_warp, 16 * i, k));
            let [b0, b1] = FragmentB::load_shared_pair(&b_warp, k, 0);
            let [b2, b3] = FragmentB::load_shared_pair(&b_warp, k, 16);
            let fb = [b0, b1, b2, b3];
            for (fa, acc) in fa.iter().zip(&mut acc) {
                for (fb, acc) in fb.iter().zip(acc) {
                    mma::mma(fa, fb, acc);
                }
            }
        }
        sync_threads();
    }
    let mut c = MatrixMut::new(c, n, n);
    for (i, acc) in acc.iter().enumerate() {
        for (j, acc) in acc.iter().enumerate() {
            acc.store(&mut c, row0 + wm + 16 * i, col0 + wn + 8 * j);
        }
    }
}

// The tensor-core GEMM of docs/KERNELS.md, as it is there.

/// A stage of the tiles, in elements: A's 128 x 32 (rows padded to 40), B's 32 x 128 (136).
const STAGE: usize = 128 * 40 + 32 * 136;
pub const BF16_GEMM_SHARED: usize = 2 * STAGE * 2; // two stages of 2-byte elements

/// `c = a * b`, `n x n` row-major, `n` a multiple of 128: 4 warps over a 128 x 128 tile of
/// `c`, each 64 x 64; k-tiles of 32 double-buffered in shared memory. Launch with a grid of
/// `[n / 128, n / 128]`, 128 threads, `shared = BF16_GEMM_SHARED`.
#[offload::kernel(launch_bounds = 128)]
pub fn bf16_gemm(n: u32, a: &[bf16], b: &[bf16], c: &mut [f32]) {
    let n = n as usize;
    let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
    let tiles = shared::<bf16>();
    let a_tile = |s: usize| tiles.matrix(s * STAGE, 128, 32, 40);
    let b_tile = |s: usize| tiles.matrix(s * STAGE + 128 * 40, 32, 128, 136);
    let t = gpu::thread_idx_x();
    let (wm, wn) = (t / 64 * 64, t / 32 % 2 * 64);
    let (row0, col0) = (gpu::block_idx_y() * 128, gpu::block_idx_x() * 128);
    let fill = |s: usize, k0: usize| {
        a_tile(s).copy_async_from::<8>(&a, row0, k0, t, 128);
        b_tile(s).copy_async_from::<8>(&b, k0, col0, t, 128);
        async_copy::commit();
    };
    let mut acc = [[Accumulator::<bf16>::zero(); 8]; 4];
    fill(0, 0);
    let steps = n / 32;
    for step in 0..steps {
        if step + 1 < steps {
            fill((step + 1) % 2, (step + 1) * 32);
            async_copy::wait(1); // this step's tiles: all but the group just started
        } else {
            async_copy::wait(0);
        }
        sync_threads();
        // This warp's rows of A and columns of B.
        let a_warp = a_tile(step % 2).block(wm, 0, 64, 32);
        let b_warp = b_tile(step % 2).block(0, wn, 32, 64);
        for k in (0..32).step_by(16) {
            let fa: [FragmentA<bf16>; 4] =
                core::array::from_fn(|i| FragmentA::load_shared(&a_warp, 16 * i, k));
            for j in (0..8).step_by(2) {
                let [b0, b1] = FragmentB::load_shared_pair(&b_warp, k, 8 * j);
                for (fa, acc) in fa.iter().zip(&mut acc) {
                    mma::mma(fa, &b0, &mut acc[j]);
                    mma::mma(fa, &b1, &mut acc[j + 1]);
                }
            }
        }
        sync_threads();
    }
    let mut c = MatrixMut::new(c, n, n);
    for (i, row) in acc.iter().enumerate() {
        for (j, acc) in row.iter().enumerate() {
            acc.store(&mut c, row0 + wm + 16 * i, col0 + wn + 8 * j);
        }
    }
}

/// The stage of a ring of `STAGES` that k-tile `kt` goes through (in 32 bits: cheaper, and
/// the compiler then bounds it, and the shared accesses made from it, by `STAGES`).
fn stage_of<const STAGES: usize>(kt: usize) -> usize {
    (kt as u32 % STAGES as u32) as usize
}

/// Padding of the shared rows of A, in elements of `size` bytes: 16 bytes, so that the 8 rows
/// an `ldmatrix` reads fall in distinct banks, or, for `f64` (read one by one), 32 bytes, so
/// that the rows of a fragment do.
pub const fn pad_a(size: usize) -> usize {
    if size == 8 { 4 } else { 16 / size }
}

/// Padding of the shared rows of B: 16 bytes of 16-bit elements (for `ldmatrix`), and 32 bytes
/// of 32- and 64-bit ones (read one by one): the four rows of a fragment then start 8 banks
/// apart, so that a fragment's loads are free of bank conflicts (64-bit loads are served a
/// half warp at a time; with 64 bytes, the `f64` rows `k` and `k + 2` would share banks).
pub const fn pad_b(size: usize) -> usize {
    if size == 2 { 8 } else { 32 / size }
}

/// The shared memory of a `gemm` instance: `stages` stages of a `bm x bk` tile of A and a
/// `bk x bn` tile of B of `size`-byte elements, rows padded.
pub const fn gemm_shared(bm: usize, bn: usize, bk: usize, stages: usize, size: usize) -> usize {
    stages * (bm * (bk + pad_a(size)) + bk * (bn + pad_b(size))) * size
}

/// `c = a * b` for `n x n` row-major matrices on the tensor cores: bf16, f16 or f32 rounded to
/// TF32 (or split in two TF32 parts, 3xTF32), summed in f32, or f64 (the FP64 tensor cores),
/// `n` a multiple of the block tile. Blocks of `WARPS_M x WARPS_N` warps (at most 8), each warp
/// `16 FM x 8 FN` of `c`, so a block `BM = 16 FM WARPS_M` by `BN = 8 FN WARPS_N`. A and B go to
/// shared memory by `copy_async_from` in pieces of `CHUNK` elements (16 bytes), `STAGES`
/// k-tiles of `BK` in flight, and from there to the tensor cores by `ldmatrix` (B of TF32
/// element by element). With `PREFETCH` each step's fragments are loaded while the step before
/// multiplies; without, a step loads and then multiplies, which saves the registers of a second
/// set of fragments (124 a thread against 210 for `f64` in 8 warps of 32 x 32), so that more
/// warps share a multiprocessor and hide the loads instead. `GROUP` > 0 takes the blocks down
/// groups of that many rows of tiles (`gpu::block_idx_grouped`), 0 in launch order. A grid of
/// `n / BN` x `n / BM`, `shared = gemm_shared(BM, BN, BK, STAGES, element size)`.
#[offload::kernel(
    launch_bounds = 256,
    instances(
        (bf16, 8, 2, 2, 4, 8, 64, 3, 0, true),
        (bf16, 8, 2, 4, 4, 8, 64, 3, 0, true),
        (f16, 8, 2, 2, 4, 8, 64, 3, 0, true),
        (Tf32, 4, 2, 2, 4, 8, 32, 3, 0, true),
        (Tf32, 4, 2, 4, 4, 8, 32, 3, 0, true),
        (Tf32, 4, 2, 2, 4, 8, 32, 3, 8, false),
        (Tf32x3, 4, 2, 4, 4, 4, 32, 3, 0, true),
        (Tf32x3, 4, 2, 4, 4, 4, 32, 3, 8, false),
        (Tf32x3, 4, 2, 2, 4, 4, 32, 3, 0, true),
        (Tf32x3, 4, 2, 2, 4, 8, 32, 3, 0, true),
        (f64, 2, 2, 4, 2, 4, 32, 3, 0, true),
        (f64, 2, 2, 4, 2, 2, 32, 3, 0, true),
        (f64, 2, 2, 4, 2, 2, 32, 3, 16, true),
        (f64, 2, 2, 2, 2, 4, 16, 3, 8, false),
        (f64, 2, 4, 2, 2, 4, 16, 3, 8, false),
        (f64, 2, 4, 2, 2, 4, 16, 3, 16, false),
        (f64, 2, 4, 2, 2, 4, 32, 2, 8, false)
    )
)]
pub fn gemm<
    E: Kind,
    const CHUNK: usize,
    const WARPS_M: usize,
    const WARPS_N: usize,
    const FM: usize,
    const FN: usize,
    const BK: usize,
    const STAGES: usize,
    const GROUP: usize,
    const PREFETCH: bool,
>(
    n: u32,
    a: &[E::Elem],
    b: &[E::Elem],
    c: &mut [E::Acc],
) {
    // Tile kt's first step commits the copies of tile kt + STAGES - 1, its last waits for tile
    // kt + 1: with one step a tile, the wait would come before the commit and let tile kt + 1
    // be read in flight.
    const { assert!(BK >= 2 * E::K, "two steps of k a tile at least") };
    let n = n as usize;
    let (bm, bn, threads) = (16 * FM * WARPS_M, 8 * FN * WARPS_N, 32 * WARPS_M * WARPS_N);
    let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
    let size = size_of::<E::Elem>();
    let (pa, pb) = (BK + pad_a(size), bn + pad_b(size));
    let stage = bm * pa + BK * pb;
    let tiles = shared::<E::Elem>();
    // Stage `s`'s tiles: A's `bm x BK`, then B's `BK x bn`.
    let a_tile = |s: usize| tiles.matrix(s * stage, bm, BK, pa);
    let b_tile = |s: usize| tiles.matrix(s * stage + bm * pa, BK, bn, pb);
    let t = gpu::thread_idx_x();
    let warp = t / 32;
    let (wm, wn) = (warp / WARPS_N * 16 * FM, warp % WARPS_N * 8 * FN);
    let (y, x) = if GROUP > 0 {
        gpu::block_idx_grouped(GROUP)
    } else {
        (gpu::block_idx_y(), gpu::block_idx_x())
    };
    let (row0, col0) = (y * bm, x * bn);
    let k_tiles = n / BK;
    // k-tile `kt` into its stage, its pieces shared by the block's threads, as one group of
    // copies (an empty one past the last k-tile, so that the waits count alike).
    let fill = |kt: usize| {
        if kt < k_tiles {
            let s = stage_of::<STAGES>(kt);
            a_tile(s).copy_async_from::<CHUNK>(&a, row0, kt * BK, t, threads);
            b_tile(s).copy_async_from::<CHUNK>(&b, kt * BK, col0, t, threads);
        }
        async_copy::commit();
    };
    for kt in 0..STAGES - 1 {
        fill(kt);
    }
    // Step `k` of stage `s`: this warp's fragments of A, then of B, two a load.
    let load = |s: usize, k: usize| {
        let a_warp = a_tile(s).block(wm, 0, 16 * FM, BK);
        let b_warp = b_tile(s).block(0, wn, BK, 8 * FN);
        let fa: [FragmentA<E>; FM] =
            core::array::from_fn(|i| FragmentA::load_shared(&a_warp, 16 * i, k));
        let mut pair = None;
        let fb: [FragmentB<E>; FN] = core::array::from_fn(|j| {
            if j % 2 == 0 {
                pair = Some(FragmentB::load_shared_pair(&b_warp, k, 8 * j));
            }
            pair.expect("an even fragment first")[j % 2]
        });
        (fa, fb)
    };
    let multiply = |(fa, fb): ([FragmentA<E>; FM], [FragmentB<E>; FN]), acc: &mut [[_; FN]; FM]| {
        for (fa, acc) in fa.iter().zip(acc) {
            for (fb, acc) in fb.iter().zip(acc) {
                mma::mma(fa, fb, acc);
            }
        }
    };
    let mut acc = [[Accumulator::<E>::zero(); FN]; FM];
    async_copy::wait(STAGES as u32 - 2);
    sync_threads();
    if PREFETCH {
        let mut fragments = load(0, 0);
        for kt in 0..k_tiles {
            for k in (0..BK).step_by(E::K) {
                let these = fragments;
                if k + E::K < BK {
                    fragments = load(stage_of::<STAGES>(kt), k + E::K);
                } else {
                    // The next tile: landed once the STAGES - 2 groups after it are all that may
                    // still be in flight, and read by every warp after the barrier (which also
                    // tells that all are done with the stage the next fill overwrites). This
                    // step's products, in registers already, keep the tensor cores busy meanwhile.
                    async_copy::wait(STAGES as u32 - 2);
                    sync_threads();
                    fragments = load(stage_of::<STAGES>(kt + 1), 0);
                }
                if k == 0 {
                    fill(kt + STAGES - 1);
                }
                multiply(these, &mut acc);
            }
        }
    } else {
        for kt in 0..k_tiles {
            // Tile kt landed, and after the barrier every warp is done with tile kt - 1's stage,
            // which the fill below overwrites.
            if kt > 0 {
                async_copy::wait(STAGES as u32 - 2);
                sync_threads();
            }
            fill(kt + STAGES - 1);
            for k in (0..BK).step_by(E::K) {
                multiply(load(stage_of::<STAGES>(kt), k), &mut acc);
            }
        }
    }
    let mut c = MatrixMut::new(c, n, n);
    for (i, acc) in acc.iter().enumerate() {
        for (j, acc) in acc.iter().enumerate() {
            acc.store(&mut c, row0 + wm + 16 * i, col0 + wn + 8 * j);
        }
    }
}

/// The shared memory of a `gemm_wgmma` instance: `stages` stages of a `bm x bk` tile of A and
/// a `bk x bn` tile of B of 16-bit elements.
pub const fn wgmma_shared(bm: usize, bn: usize, bk: usize, stages: usize) -> usize {
    stages * (bm + bn) * bk * 2
}

/// `c = a * b` for `n x n` row-major bf16 or f16 matrices into f32 on Hopper's warpgroup MMA
/// (`wgmma`), `n` a multiple of the block tile: `GROUPS` warpgroups over a `64 GROUPS x 8 C`
/// tile of `c`, each `64 x 8 C`; k-tiles of `BK` (64 or 128) in `STAGES` stages of shared
/// memory, filled by `copy_async_from` while the warpgroups multiply an earlier one. A grid of
/// `n / (8 C)` x `n / (64 GROUPS)`, `128 GROUPS` threads, `shared = wgmma_shared(64 GROUPS,
/// 8 C, BK, STAGES)`.
#[offload::kernel(
    launch_bounds = 256,
    instances((bf16, 2, 16, 64, 3), (bf16, 2, 32, 64, 3), (f16, 2, 16, 64, 3))
)]
pub fn gemm_wgmma<
    E: wgmma::Half,
    const GROUPS: usize,
    const C: usize,
    const BK: usize,
    const STAGES: usize,
>(
    n: u32,
    a: &[E],
    b: &[E],
    c: &mut [f32],
) {
    let n = n as usize;
    let (bm, bn, threads) = (64 * GROUPS, 8 * C, 128 * GROUPS);
    let (a, b) = (Matrix::new(a, n, n), Matrix::new(b, n, n));
    let tiles = shared::<E>();
    let stage = (bm + bn) * BK;
    let a_tile = |s: usize| Tile::new(&tiles, s * stage, bm, BK);
    let b_tile = |s: usize| Tile::new(&tiles, s * stage + bm * BK, BK, bn);
    let t = gpu::thread_idx_x();
    let group = t / 128;
    let (row0, col0) = (gpu::block_idx_y() * bm, gpu::block_idx_x() * bn);
    let k_tiles = n / BK;
    // k-tile `kt` into its stage as one group of copies (an empty one past the last k-tile).
    let fill = |kt: usize| {
        if kt < k_tiles {
            let s = stage_of::<STAGES>(kt);
            a_tile(s).copy_async_from::<8>(&a, row0, kt * BK, t, threads);
            b_tile(s).copy_async_from::<8>(&b, kt * BK, col0, t, threads);
        }
        async_copy::commit();
    };
    for kt in 0..STAGES - 1 {
        fill(kt);
    }
    let mut acc = [Accumulator::<E>::zero(); C];
    for kt in 0..k_tiles {
        // This k-tile landed; after the barrier every warpgroup is done with the stage the
        // next fill overwrites (its `mma` returned before it got here), which starts once
        // this warpgroup's products are done.
        async_copy::wait(STAGES as u32 - 2);
        sync_threads();
        let s = stage_of::<STAGES>(kt);
        wgmma::mma(&a_tile(s).block(64 * group, 0, 64, BK), &b_tile(s), &mut acc);
        fill(kt + STAGES - 1);
    }
    wgmma::store(&acc, &mut MatrixMut::new(c, n, n), row0 + 64 * group, col0);
}
