//! Matrix multiply-accumulate by a warpgroup: Hopper's `wgmma.mma_async`, which reads both
//! operands from shared memory itself, so that neither their registers nor `ldmatrix` loads
//! are needed (cuBLAS's instruction on the H100 and H200).
//!
//! A *warpgroup* is four consecutive warps of a block (threads `128 g` to `128 g + 127`). It
//! multiplies a 64 x K tile of A by a K x N tile of B into a 64 x N accumulator of `f32`, the
//! operands [`bf16`] or [`f16`](struct@f16), K at most 128 (a multiple of 16), N 64, 128 or
//! 256. The accumulator is `N / 8` [`Accumulator`]s of [`mma`](super::mma) per thread: warp
//! `w` of the group holds rows `16 w` to `16 w + 15`, its `j`-th accumulator columns `8 j` to
//! `8 j + 7`, as `mma.sync` lays them out ([`store`] writes them all).
//!
//! The operands lie in shared memory as [`Tile`]s, in the layout the instruction reads (rows of
//! 128 bytes whose 16-byte pieces are permuted by row, against bank conflicts): A's rows along
//! K, B's along N (row-major, as the matrices are). [`Tile::copy_async_from`] fills them.
//!
//! ```text
//! // 2 warpgroups over a 128 x 128 tile of c; k-tiles of 64 (a stage: A 128 x 64, B 64 x 128)
//! let tiles = offload::gpu::shared::<bf16>();
//! let (a_tile, b_tile) = (Tile::new(&tiles, 0, 128, 64), Tile::new(&tiles, 128 * 64, 64, 128));
//! a_tile.copy_async_from::<8>(&a, row0, k0, t, 256);
//! b_tile.copy_async_from::<8>(&b, k0, col0, t, 256);
//! async_copy::commit();
//! async_copy::wait(0);
//! sync_threads();
//! let group = t / 128;
//! let mut acc = [Accumulator::<bf16>::zero(); 16]; // 64 x 128
//! wgmma::mma(&a_tile.block(64 * group, 0, 64, 64), &b_tile, &mut acc);
//! ```
//!
//! [`mma`] is warpgroup-wide, as the [warp](super::warp) operations are warp-wide: all 128
//! threads of the group call it with the same arguments (a GPU may hang, or give anything,
//! otherwise), and every warpgroup of the block is whole (launch a multiple of 128 threads). It
//! returns once the products are in the accumulator and the instruction has read the tiles, so
//! that a tile may be overwritten after the next barrier.
//!
//! `wgmma` needs an image for `sm_90a` (`--target-cpu sm_90a`), whose kernels the library loads
//! from their PTX (the CUDA driver compiles it). In every other image, the host-offload one
//! included, [`mma`] computes the same products with the warps' `mma.sync` over the same
//! tiles: the same kernel runs everywhere, at the tensor cores' full speed on sm_90a.

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
#[path = "wgmma/ptx.rs"]
mod imp;
mod tile;

pub use self::tile::Tile;
use super::mma::{Accumulator, Kind};
use super::{MatrixMut, block_dim_x, block_dim_y, thread_idx_x, thread_idx_y, thread_idx_z};
use crate::{bf16, f16};

/// Rows of A and of the accumulator.
pub const M: usize = 64;

/// The kinds a warpgroup multiplies: [`bf16`] and [`f16`](struct@f16), summed in `f32`.
pub trait Half: Kind<Elem = Self, Acc = f32> + crate::DeviceCopy + sealed::Sealed {
    /// Whether the PTX type is `f16` (else `bf16`).
    #[doc(hidden)]
    const __F16: bool;
}

impl Half for bf16 {
    const __F16: bool = false;
}
impl Half for f16 {
    const __F16: bool = true;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::bf16 {}
    impl Sealed for crate::f16 {}
}

/// The most k-steps of 16 one [`mma`] makes: K up to 128.
const MAX_STEPS: usize = 8;

/// `acc += a * b` by the calling warpgroup (see the [module](self)): `a` a 64 x K block of a
/// tile, `b` a K x N one, `N = 8 C` (64, 128 or 256), K a multiple of 16 up to 128, A's block
/// starting at a multiple of 16 columns and of 8 rows, B's at a multiple of 8 rows and of 128
/// bytes across. Panics where the blocks do not fit so.
#[inline(always)]
#[track_caller]
pub fn mma<E: Half, const C: usize>(a: &Tile<E>, b: &Tile<E>, acc: &mut [Accumulator<E>; C]) {
    const { assert!(matches!(C, 8 | 16 | 32), "wgmma's N is 64, 128 or 256: C 8, 16 or 32") };
    let k = a.cols();
    if a.rows() != M || b.rows() != k || b.cols() != 8 * C {
        panic!(
            "wgmma::mma: a {} x {} tile of A times a {} x {} tile of B into 64 x {}: A must be \
             64 x K and B K x {}",
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols(),
            8 * C,
            8 * C
        );
    }
    if !(k > 0 && k.is_multiple_of(16) && k <= 16 * MAX_STEPS && a.k_aligned() && b.n_aligned()) {
        panic!(
            "wgmma::mma: K = {k} must be a multiple of 16 up to 128, A's block must start at a \
             multiple of 16 columns and of 8 rows, and B's at a multiple of 8 rows and of 128 \
             bytes across"
        );
    }
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
    {
        // Step `s`: A's columns and B's rows from `16 s` on.
        let da: [u64; MAX_STEPS] = core::array::from_fn(|s| a.descriptor_k_major(16 * s));
        let db: [u64; MAX_STEPS] = core::array::from_fn(|s| b.descriptor_mn_major(16 * s));
        let mut flat = [0f32; 128];
        for (j, acc) in acc.iter_mut().enumerate() {
            flat[4 * j..4 * j + 4].copy_from_slice(acc.values_mut());
        }
        imp::mma::<C>(E::__F16, k / 16, &da, &db, &mut flat);
        for (j, acc) in acc.iter_mut().enumerate() {
            acc.values_mut().copy_from_slice(&flat[4 * j..4 * j + 4]);
        }
    }
    #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90a")))]
    by_warps(a, b, acc);
}

/// [`mma`] without `wgmma`: each warp of the group multiplies its 16 rows by `mma.sync`,
/// reading its fragments from the tiles element by element.
#[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90a")))]
#[inline(always)]
fn by_warps<E: Half, const C: usize>(a: &Tile<E>, b: &Tile<E>, acc: &mut [Accumulator<E>; C]) {
    use super::mma::{self, FragmentA, FragmentB};
    let row = 16 * warp_in_group();
    for k in (0..a.cols()).step_by(E::K) {
        let fa = FragmentA::<E>::gather(|r, c| a.read(row + r, k + c));
        for (j, acc) in acc.iter_mut().enumerate() {
            let fb = FragmentB::<E>::gather(|r, c| b.read(k + r, 8 * j + c));
            mma::mma(&fa, &fb, acc);
        }
    }
}

/// Stores the calling warpgroup's 64 x `8 C` accumulator into `c` at `(row, col)`: each warp
/// its 16 rows. Panics if the tile runs past `c`.
#[inline(always)]
#[track_caller]
pub fn store<E: Half, const C: usize>(
    acc: &[Accumulator<E>; C],
    c: &mut MatrixMut<'_, f32>,
    row: usize,
    col: usize,
) {
    let row = row + 16 * warp_in_group();
    for (j, acc) in acc.iter().enumerate() {
        acc.store(c, row, col + 8 * j);
    }
}

/// The calling thread's warp in its warpgroup: 0 to 3.
#[inline(always)]
fn warp_in_group() -> usize {
    let thread = thread_idx_x() + block_dim_x() * (thread_idx_y() + block_dim_y() * thread_idx_z());
    thread / 32 % 4
}
