//! Matrix multiply-accumulate by a warp on the tensor cores: PTX's `mma.sync`, with `ldmatrix`
//! to load its operands from shared memory.
//!
//! The 32 threads of a warp hold a 16 x K tile of A, a K x 8 tile of B and the 16 x 8
//! accumulator between them, each thread a few elements (a *fragment*), and multiply them in
//! one instruction: `c += a * b`. K and the types follow the operands' [`Kind`]:
//!
//! | kind | A, B read as | K | accumulator | instruction (sm_80 and later) |
//! |---|---|---|---|---|
//! | [`bf16`] | `bf16` | 16 | `f32` | `mma.sync.aligned.m16n8k16...f32.bf16.bf16.f32` |
//! | [`f16`](struct@f16) | `f16` | 16 | `f32` | `mma.sync.aligned.m16n8k16...f32.f16.f16.f32` |
//! | [`Tf32`] | `f32`, rounded to TF32 (10 bits of significand, to nearest, ties away) | 8 | `f32` | `mma.sync.aligned.m16n8k8...f32.tf32.tf32.f32` |
//! | [`Tf32x3`] | `f32`, split into two TF32 parts (`f32` to its last place) | 8 | `f32` | three `mma.sync.aligned.m16n8k8...f32.tf32.tf32.f32` |
//! | `f64` | `f64` | 8 | `f64` | `mma.sync.aligned.m16n8k8...f64` on sm_90, four `m8n8k4` before it |
//!
//! ```text
//! use offload::bf16;
//! use offload::gpu::mma::{self, Accumulator, FragmentA, FragmentB};
//!
//! // One warp: c (16 x 8) = a (16 x k) * b (k x 8), row-major, k a multiple of 16.
//! #[offload::kernel]
//! pub fn tile_product(k: u32, a: &[bf16], b: &[bf16], c: &mut [f32]) {
//!     use offload::gpu::{Matrix, MatrixMut};
//!     let k = k as usize;
//!     let (a, b) = (Matrix::new(a, 16, k), Matrix::new(b, k, 8));
//!     let mut acc = Accumulator::<bf16>::zero();
//!     for k0 in (0..k).step_by(16) {
//!         mma::mma(&FragmentA::load(&a, 0, k0), &FragmentB::load(&b, k0, 0), &mut acc);
//!     }
//!     acc.store(&mut MatrixMut::new(c, 16, 8), 0, 0);
//! }
//! ```
//!
//! Fast kernels stage tiles in shared memory ([`SharedMatrix`], filled by
//! [`SharedMatrix::copy_async_from`] without the threads waiting for the loads) and load
//! fragments from there: [`FragmentA::load_shared`] and [`FragmentB::load_shared`] (or two B
//! fragments side by side, [`FragmentB::load_shared_pair`]) are one `ldmatrix` each for the
//! 16-bit kinds (and A of TF32), which wants each row of the tile 16 bytes at a multiple of 16
//! bytes in shared memory: pad rows to a multiple of 8 16-bit elements (and not of 64, against
//! bank conflicts). docs/KERNELS.md and benches/workloads have complete GEMMs.
//!
//! Every function here is warp-wide, as the warp ([`super::warp`]) operations are: every thread
//! of the warp calls it, with the same arguments (a GPU may hang, or give anything, otherwise).
//! The loads check their tile against the matrix or the shared memory once, and panic where
//! it does not fit. In the host-offload image the warp's threads exchange their fragments as
//! the hardware does, through the warp operations' exchange, and compute the same products:
//! exactly for `f64` (a fused multiply-add per step of k, as the hardware) and, for the
//! others, each product exact and their sum with the accumulator rounded once to `f32` (the
//! tensor cores' own order of rounding is not specified; results may differ from the GPU's in
//! the last bits of `f32`).

use core::marker::PhantomData;

use super::{Matrix, MatrixMut, SharedMatrix, warp};
use crate::{DeviceCopy, bf16, f16};

#[cfg(target_arch = "nvptx64")]
#[path = "mma/ptx.rs"]
mod imp;
#[cfg(not(target_arch = "nvptx64"))]
#[path = "mma/emulated.rs"]
mod imp;

/// Rows of A and of the accumulator.
pub const M: usize = 16;
/// Columns of B and of the accumulator.
pub const N: usize = 8;

/// The kind of a product: what A and B hold and what they are summed in (see the module's
/// table). Implemented for [`bf16`], [`f16`](struct@f16), [`Tf32`], [`Tf32x3`] and `f64`.
pub trait Kind: sealed::Sealed + Copy + 'static {
    /// What A and B are read from memory as.
    type Elem: DeviceCopy + Copy;
    /// What the products are summed in: the accumulator's elements.
    type Acc: DeviceCopy + Copy;
    /// Columns of A, rows of B.
    const K: usize;

    /// A register of a fragment: two 16-bit elements, or one of 32 or 64 bits.
    #[doc(hidden)]
    type __Unit: Copy;
    /// Elements in a unit.
    #[doc(hidden)]
    const __PACK: usize;
    /// Whether units are 32 bits, so that `ldmatrix` (which moves 16-bit pairs) loads them.
    #[doc(hidden)]
    const __LDMATRIX: bool;
    /// The unit of the element `lo` (and, where a unit holds two, `hi` after it).
    #[doc(hidden)]
    fn __unit(lo: Self::Elem, hi: Self::Elem) -> Self::__Unit;
    /// The unit of 32 bits `ldmatrix` loaded.
    #[doc(hidden)]
    fn __from_b32(bits: u32) -> Self::__Unit;
    /// 0 in the accumulator's type.
    #[doc(hidden)]
    const __ZERO: Self::Acc;
    /// `c += a * b` over the warp's fragments.
    #[doc(hidden)]
    fn __mma(a: &[Self::__Unit; 4], b: &[Self::__Unit; 2], c: &mut [Self::Acc; 4]);
}

/// The TF32 kind: `f32` operands rounded to the tensor cores' 19-bit format (`f32`'s exponent,
/// 10 bits of significand) as they are loaded, summed in `f32`. A type for
/// [`FragmentA<Tf32>`](FragmentA) and the like, with no values.
#[derive(Clone, Copy, Debug)]
pub enum Tf32 {}

/// `f32` products on the TF32 tensor cores at `f32`'s accuracy ("3xTF32"): each operand is
/// split, as it is multiplied, into a head, itself rounded to TF32, and a tail, the rest (exact
/// in `f32`), of which the tensor cores read the TF32 part (between them `x` to a unit of its
/// last place, against TF32's 11 bits), and each step is three TF32 products summed in `f32`:
/// `tail_a * head_b`, `head_a * tail_b`, then `head_a * head_b` (the tails' product lies below
/// `f32`'s precision). A third of [`Tf32`]'s rate. Their sum is the tensor cores' `f32`
/// accumulation, three times a step, which loses more than `f32` fused multiply-adds over long
/// sums (4096 deep on an H100: a largest relative error of 2.6e-5, where cuBLAS's SGEMM had
/// 4.3e-7 and TF32, one accumulation a step, 9.3e-6). NaN operands give NaN, and so do
/// infinite ones (and finite ones that TF32 rounds to infinity, the top 2^-12 of `f32`'s
/// range) in the products they enter: their tail is infinity minus itself, or minus infinity.
/// Use [`Tf32`] or `f32` where infinities must go through.
#[derive(Clone, Copy, Debug)]
pub enum Tf32x3 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::bf16 {}
    impl Sealed for crate::f16 {}
    impl Sealed for super::Tf32 {}
    impl Sealed for super::Tf32x3 {}
    impl Sealed for f64 {}
}

/// The 16-bit kinds: two elements a unit, the low one first.
macro_rules! kind16 {
    ($t:ty, $mma:ident) => {
        impl Kind for $t {
            type Elem = $t;
            type Acc = f32;
            const K: usize = 16;
            type __Unit = u32;
            const __PACK: usize = 2;
            const __LDMATRIX: bool = true;
            #[inline(always)]
            fn __unit(lo: $t, hi: $t) -> u32 {
                u32::from(lo.to_bits()) | u32::from(hi.to_bits()) << 16
            }
            #[inline(always)]
            fn __from_b32(bits: u32) -> u32 {
                bits
            }
            const __ZERO: f32 = 0.0;
            #[inline(always)]
            fn __mma(a: &[u32; 4], b: &[u32; 2], c: &mut [f32; 4]) {
                imp::$mma(a, b, c)
            }
        }
    };
}
kind16!(bf16, mma_bf16);
kind16!(f16, mma_f16);

impl Kind for Tf32 {
    type Elem = f32;
    type Acc = f32;
    const K: usize = 8;
    type __Unit = u32;
    const __PACK: usize = 1;
    const __LDMATRIX: bool = true;
    #[inline(always)]
    fn __unit(lo: f32, _: f32) -> u32 {
        imp::to_tf32(lo.to_bits())
    }
    #[inline(always)]
    fn __from_b32(bits: u32) -> u32 {
        imp::to_tf32(bits)
    }
    const __ZERO: f32 = 0.0;
    #[inline(always)]
    fn __mma(a: &[u32; 4], b: &[u32; 2], c: &mut [f32; 4]) {
        imp::mma_tf32(a, b, c)
    }
}

impl Kind for Tf32x3 {
    type Elem = f32;
    type Acc = f32;
    const K: usize = 8;
    /// The `f32` bits, split where they are multiplied: a fragment held for the next step
    /// takes one register a unit, not two, and the compiler splits each unit once.
    type __Unit = u32;
    const __PACK: usize = 1;
    const __LDMATRIX: bool = true;
    #[inline(always)]
    fn __unit(lo: f32, _: f32) -> u32 {
        lo.to_bits()
    }
    #[inline(always)]
    fn __from_b32(bits: u32) -> u32 {
        bits
    }
    const __ZERO: f32 = 0.0;
    #[inline(always)]
    fn __mma(a: &[u32; 4], b: &[u32; 2], c: &mut [f32; 4]) {
        let (a, b) = (a.map(split_tf32), b.map(split_tf32));
        let (head_a, tail_a) = (a.map(|u| u[0]), a.map(|u| u[1]));
        let (head_b, tail_b) = (b.map(|u| u[0]), b.map(|u| u[1]));
        imp::mma_tf32(&tail_a, &head_b, c);
        imp::mma_tf32(&head_a, &tail_b, c);
        imp::mma_tf32(&head_a, &head_b, c);
    }
}

/// `f32` bits as TF32 head and tail (see [`Tf32x3`]): the head rounded to nearest (ties away, as
/// `cvt.rna.tf32.f32`) in the bits, then `x - head`, exact in `f32` (at most the 13 bits TF32
/// leaves out), its low bits left for the tensor cores to drop. Three instructions, where two
/// conversions and a choice on infinity took eleven: beside three products, the split's cost
/// decides 3xTF32's speed.
#[inline(always)]
fn split_tf32(bits: u32) -> [u32; 2] {
    let head = round_tf32(bits);
    [head, (f32::from_bits(bits) - f32::from_bits(head)).to_bits()]
}

/// Finite `f32` bits rounded to TF32 as `cvt.rna.tf32.f32` rounds them: to nearest, ties away
/// from zero, the low 13 bits cleared (a carry into the exponent gives the next power of two,
/// or infinity).
#[inline(always)]
fn round_tf32(bits: u32) -> u32 {
    bits.wrapping_add(0x1000) & !0x1fff
}

impl Kind for f64 {
    type Elem = f64;
    type Acc = f64;
    const K: usize = 8;
    type __Unit = f64;
    const __PACK: usize = 1;
    const __LDMATRIX: bool = false;
    #[inline(always)]
    fn __unit(lo: f64, _: f64) -> f64 {
        lo
    }
    #[inline(always)]
    fn __from_b32(_: u32) -> f64 {
        unreachable!("no ldmatrix of 64-bit elements")
    }
    const __ZERO: f64 = 0.0;
    #[inline(always)]
    fn __mma(a: &[f64; 4], b: &[f64; 2], c: &mut [f64; 4]) {
        imp::mma_f64(a, b, c)
    }
}

/// Where unit `i` of lane `lane` of an A fragment lies in the 16 x K tile: (row, column of its
/// first element).
#[inline(always)]
fn a_position<E: Kind>(lane: usize, i: usize) -> (usize, usize) {
    (lane / 4 + 8 * (i % 2), (lane % 4 + 4 * (i / 2)) * E::__PACK)
}

/// Where unit `i` of lane `lane` of a B fragment lies in the K x 8 tile: (row of its first
/// element, column); a unit of two holds rows `k` and `k + 1`.
#[inline(always)]
fn b_position<E: Kind>(lane: usize, i: usize) -> (usize, usize) {
    ((lane % 4 + 4 * i) * E::__PACK, lane / 4)
}

/// Where value `i` of lane `lane` of an accumulator lies in the 16 x 8 tile: (row, column).
#[inline(always)]
fn accumulator_position(lane: usize, i: usize) -> (usize, usize) {
    (lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2)
}

/// The calling lane's part of a 16 x K tile of A (see the [module](self)).
#[derive(Clone, Copy, Debug)]
pub struct FragmentA<E: Kind> {
    units: [E::__Unit; 4],
    _kind: PhantomData<E>,
}

/// The calling lane's part of a K x 8 tile of B (see the [module](self)).
#[derive(Clone, Copy, Debug)]
pub struct FragmentB<E: Kind> {
    units: [E::__Unit; 2],
    _kind: PhantomData<E>,
}

/// The calling lane's part of a 16 x 8 accumulator (see the [module](self)).
#[derive(Clone, Copy, Debug)]
pub struct Accumulator<E: Kind> {
    values: [E::Acc; 4],
    _kind: PhantomData<E>,
}

/// `c += a * b` for the warp's 16 x K tile `a`, K x 8 tile `b` and 16 x 8 accumulator `c`: one
/// `mma.sync` (see the [module](self)).
#[inline(always)]
pub fn mma<E: Kind>(a: &FragmentA<E>, b: &FragmentB<E>, c: &mut Accumulator<E>) {
    E::__mma(&a.units, &b.units, &mut c.values)
}

/// Panics unless a `rows x cols` tile at `(row, col)` lies inside `matrix`.
#[inline(always)]
#[track_caller]
fn check_tile<T>(what: &str, matrix: &Matrix<'_, T>, row: usize, col: usize, tile: [usize; 2]) {
    if !matrix.holds(row, col, tile[0], tile[1]) {
        panic!(
            "{what}: a {} x {} tile at ({row}, {col}) runs past a {} x {} matrix",
            tile[0],
            tile[1],
            matrix.rows(),
            matrix.cols()
        );
    }
}

/// Panics unless the rows of `tile` from column `col` on start at multiples of 16 bytes, as
/// `ldmatrix` needs.
#[inline(always)]
#[track_caller]
fn check_rows16<T: DeviceCopy>(what: &str, tile: &SharedMatrix<T>, col: usize) {
    if !(tile.rows_aligned(16) && (col * size_of::<T>()).is_multiple_of(16)) {
        panic!(
            "{what}: the rows of the shared matrix from column {col} on must start at multiples \
             of 16 bytes (its first element, its stride and the column multiples of {} elements)",
            16 / size_of::<T>()
        );
    }
}

impl<E: Kind> FragmentA<E> {
    /// The lane's fragment of the 16 x K tile whose element `(r, c)` is `at(r, c)`, each lane
    /// reading its own elements.
    #[cfg_attr(all(target_arch = "nvptx64", target_feature = "sm_90a"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn gather(at: impl Fn(usize, usize) -> E::Elem) -> Self {
        let lane = warp::lane_id();
        let units = core::array::from_fn(|i| {
            let (r, c) = a_position::<E>(lane, i);
            let lo = at(r, c);
            E::__unit(lo, if E::__PACK == 2 { at(r, c + 1) } else { lo })
        });
        FragmentA { units, _kind: PhantomData }
    }

    /// The 16 x K tile of `a` whose top left element is `(row, col)`, read element by element
    /// (from any memory; [`load_shared`](Self::load_shared) is the fast way). Panics if the
    /// tile runs past the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn load(a: &Matrix<'_, E::Elem>, row: usize, col: usize) -> Self {
        check_tile("FragmentA::load", a, row, col, [M, E::K]);
        let lane = warp::lane_id();
        let units = core::array::from_fn(|i| {
            let (r, c) = a_position::<E>(lane, i);
            // SAFETY: inside the tile, which is inside the matrix (checked above).
            unsafe {
                E::__unit(a.get_unchecked(row + r, c + col), pair::<E>(a, row + r, col + c, 0, 1))
            }
        });
        FragmentA { units, _kind: PhantomData }
    }

    /// The 16 x K tile of a shared matrix whose top left element is `(row, col)`: one
    /// `ldmatrix.x4` for the 16-bit kinds and TF32, whose rows must then start at multiples of
    /// 16 bytes (the matrix's first element, its stride and `col` multiples of 8 16-bit or 4
    /// 32-bit elements). Panics if the tile runs past the matrix or the rows are not so
    /// aligned.
    #[inline(always)]
    #[track_caller]
    pub fn load_shared(tile: &SharedMatrix<E::Elem>, row: usize, col: usize) -> Self {
        tile.check("FragmentA::load_shared", row, col, [M, E::K]);
        let lane = warp::lane_id();
        if E::__LDMATRIX {
            check_rows16("FragmentA::load_shared", tile, col);
            // Matrices 0 and 1: rows 0-7 and 8-15 of the first 16 bytes; 2 and 3 the next 16.
            let lane_at = tile.offset(lane % 16, (lane / 16) * (16 / size_of::<E::Elem>()));
            // SAFETY: every row of the tile is in bounds and aligned (checked above).
            let regs = unsafe { imp::ldmatrix::<_, 4, false>(tile, row, col, lane_at) };
            return FragmentA { units: regs.map(E::__from_b32), _kind: PhantomData };
        }
        let units = core::array::from_fn(|i| {
            let (r, c) = a_position::<E>(lane, i);
            // SAFETY: inside the tile, which is inside the matrix (checked above).
            let x = unsafe { shared_element(tile, row + r, col + c) };
            E::__unit(x, x)
        });
        FragmentA { units, _kind: PhantomData }
    }
}

/// Element `(r, c)` of a shared matrix.
///
/// # Safety
/// `(r, c)` lies inside the matrix.
#[inline(always)]
unsafe fn shared_element<T: DeviceCopy>(tile: &SharedMatrix<T>, r: usize, c: usize) -> T {
    // SAFETY: inside the matrix (the caller's), which is inside the memory.
    unsafe { tile.memory().as_ptr().add(tile.index(r, c)).read() }
}

/// The element after `(row, col)` (at `(row + dr, col + dc)`) where units hold two, else
/// `(row, col)` again: what [`Kind::__unit`] takes as its second.
///
/// # Safety
/// Where units hold two, both elements are inside `m`; else `(row, col)` is.
#[inline(always)]
unsafe fn pair<E: Kind>(
    m: &Matrix<'_, E::Elem>,
    row: usize,
    col: usize,
    dr: usize,
    dc: usize,
) -> E::Elem {
    let (r, c) = if E::__PACK == 2 { (row + dr, col + dc) } else { (row, col) };
    // SAFETY: the caller's.
    unsafe { m.get_unchecked(r, c) }
}

impl<E: Kind> FragmentB<E> {
    /// The lane's fragment of the K x 8 tile whose element `(r, c)` is `at(r, c)`, each lane
    /// reading its own elements.
    #[cfg_attr(all(target_arch = "nvptx64", target_feature = "sm_90a"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn gather(at: impl Fn(usize, usize) -> E::Elem) -> Self {
        let lane = warp::lane_id();
        let units = core::array::from_fn(|i| {
            let (r, c) = b_position::<E>(lane, i);
            let lo = at(r, c);
            E::__unit(lo, if E::__PACK == 2 { at(r + 1, c) } else { lo })
        });
        FragmentB { units, _kind: PhantomData }
    }

    /// The K x 8 tile of `b` whose top left element is `(row, col)`, read element by element
    /// (from any memory; [`load_shared`](Self::load_shared) is the fast way). Panics if the
    /// tile runs past the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn load(b: &Matrix<'_, E::Elem>, row: usize, col: usize) -> Self {
        check_tile("FragmentB::load", b, row, col, [E::K, N]);
        let lane = warp::lane_id();
        let units = core::array::from_fn(|i| {
            let (r, c) = b_position::<E>(lane, i);
            // SAFETY: inside the tile, which is inside the matrix (checked above).
            unsafe {
                E::__unit(b.get_unchecked(row + r, col + c), pair::<E>(b, row + r, col + c, 1, 0))
            }
        });
        FragmentB { units, _kind: PhantomData }
    }

    /// The K x 8 tile of a shared matrix whose top left element is `(row, col)`: one
    /// `ldmatrix.x2.trans` for the 16-bit kinds (rows at multiples of 16 bytes, as for
    /// [`FragmentA::load_shared`]); two loads a thread for TF32 and `f64`. Panics if the tile
    /// runs past the matrix (or, for the 16-bit kinds, the rows are not so aligned).
    #[inline(always)]
    #[track_caller]
    pub fn load_shared(tile: &SharedMatrix<E::Elem>, row: usize, col: usize) -> Self {
        tile.check("FragmentB::load_shared", row, col, [E::K, N]);
        let lane = warp::lane_id();
        if E::__PACK == 2 {
            check_rows16("FragmentB::load_shared", tile, col);
            // Lanes 0-15 give rows 0-15 (the upper lanes' addresses are not read: theirs too).
            let lane_at = tile.offset(lane % 16, 0);
            // SAFETY: every row of the tile is in bounds and aligned (checked above).
            let regs = unsafe { imp::ldmatrix::<_, 2, true>(tile, row, col, lane_at) };
            return FragmentB { units: regs.map(E::__from_b32), _kind: PhantomData };
        }
        let units = core::array::from_fn(|i| {
            let (r, c) = b_position::<E>(lane, i);
            // SAFETY: inside the tile, which is inside the matrix (checked above).
            let x = unsafe { shared_element(tile, row + r, col + c) };
            E::__unit(x, x)
        });
        FragmentB { units, _kind: PhantomData }
    }

    /// Two K x 8 tiles side by side (K x 16, the second's first column at `col + 8`), as
    /// [`load_shared`](Self::load_shared) loads one: for the 16-bit kinds one
    /// `ldmatrix.x4.trans`.
    #[inline(always)]
    #[track_caller]
    pub fn load_shared_pair(tile: &SharedMatrix<E::Elem>, row: usize, col: usize) -> [Self; 2] {
        if E::__PACK != 2 {
            return [Self::load_shared(tile, row, col), Self::load_shared(tile, row, col + N)];
        }
        tile.check("FragmentB::load_shared_pair", row, col, [E::K, 2 * N]);
        check_rows16("FragmentB::load_shared_pair", tile, col);
        let lane = warp::lane_id();
        // Matrices 0 and 1: rows 0-7 and 8-15 of the first 8 columns; 2 and 3 the next 8.
        let lane_at = tile.offset(lane % 16, (lane / 16) * N);
        // SAFETY: every row of the tile is in bounds and aligned (checked above).
        let [r0, r1, r2, r3] = unsafe { imp::ldmatrix::<_, 4, true>(tile, row, col, lane_at) };
        [
            FragmentB { units: [r0, r1].map(E::__from_b32), _kind: PhantomData },
            FragmentB { units: [r2, r3].map(E::__from_b32), _kind: PhantomData },
        ]
    }

    /// The K x 8 tile of B from its transpose in a shared matrix (B column-major: 8 rows of K,
    /// B's columns; the tile's first column of B is row `row` of `tile`, its first k column
    /// `col`): one `ldmatrix.x2` for the 16-bit kinds and TF32 (rows at multiples of 16
    /// bytes), two loads a thread for `f64`.
    #[inline(always)]
    #[track_caller]
    pub fn load_shared_transposed(tile: &SharedMatrix<E::Elem>, row: usize, col: usize) -> Self {
        tile.check("FragmentB::load_shared_transposed", row, col, [N, E::K]);
        let lane = warp::lane_id();
        if E::__LDMATRIX {
            check_rows16("FragmentB::load_shared_transposed", tile, col);
            // Matrix 0: B's columns 0-7, their first 16 bytes; matrix 1 the next 16 bytes.
            let lane_at = tile.offset(lane % 8, (lane / 8 % 2) * (16 / size_of::<E::Elem>()));
            // SAFETY: every row of the tile is in bounds and aligned (checked above).
            let regs = unsafe { imp::ldmatrix::<_, 2, false>(tile, row, col, lane_at) };
            return FragmentB { units: regs.map(E::__from_b32), _kind: PhantomData };
        }
        let units = core::array::from_fn(|i| {
            let (r, c) = b_position::<E>(lane, i);
            // SAFETY: B's (r, c) is the transpose's (c, r): inside the tile (checked above).
            let x = unsafe { shared_element(tile, row + c, col + r) };
            E::__unit(x, x)
        });
        FragmentB { units, _kind: PhantomData }
    }
}

impl<E: Kind> Accumulator<E> {
    /// The lane's elements, in the order of the tensor cores' registers.
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
    #[inline(always)]
    pub(crate) fn values_mut(&mut self) -> &mut [E::Acc; 4] {
        &mut self.values
    }

    /// Zeros.
    #[inline(always)]
    pub fn zero() -> Self {
        Accumulator { values: [E::__ZERO; 4], _kind: PhantomData }
    }

    /// The 16 x 8 tile of `c` whose top left element is `(row, col)`. Panics if the tile runs
    /// past the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn load(c: &Matrix<'_, E::Acc>, row: usize, col: usize) -> Self {
        check_tile("Accumulator::load", c, row, col, [M, N]);
        let lane = warp::lane_id();
        let values = core::array::from_fn(|i| {
            let (r, k) = accumulator_position(lane, i);
            // SAFETY: inside the tile, which is inside the matrix (checked above).
            unsafe { c.get_unchecked(row + r, col + k) }
        });
        Accumulator { values, _kind: PhantomData }
    }

    /// Writes the accumulator to the 16 x 8 tile of `c` whose top left element is
    /// `(row, col)`. Panics if the tile runs past the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn store(&self, c: &mut MatrixMut<'_, E::Acc>, row: usize, col: usize) {
        self.store_with(c, row, col, |v| v)
    }

    /// Writes `convert` of each value to the 16 x 8 tile of `c` whose top left element is
    /// `(row, col)` (a `bf16` result: `|v| bf16::from_f32(v)`). Panics if the tile runs past
    /// the matrix.
    #[inline(always)]
    #[track_caller]
    pub fn store_with<T>(
        &self,
        c: &mut MatrixMut<'_, T>,
        row: usize,
        col: usize,
        convert: impl Fn(E::Acc) -> T,
    ) {
        check_tile("Accumulator::store", &c.as_matrix(), row, col, [M, N]);
        let lane = warp::lane_id();
        for (i, &value) in self.values.iter().enumerate() {
            let (r, k) = accumulator_position(lane, i);
            // SAFETY: inside the tile, which is inside the matrix (checked above).
            unsafe { c.set_unchecked(row + r, col + k, convert(value)) };
        }
    }

    /// The calling lane's values, each with its place in the 16 x 8 tile: `(row, column,
    /// value)`.
    #[inline(always)]
    pub fn entries(&self) -> [(usize, usize, E::Acc); 4] {
        let lane = warp::lane_id();
        core::array::from_fn(|i| {
            let (r, c) = accumulator_position(lane, i);
            (r, c, self.values[i])
        })
    }

    /// The accumulator with `f` applied to each value (a scale, an activation).
    #[inline(always)]
    pub fn map(self, f: impl FnMut(E::Acc) -> E::Acc) -> Self {
        Accumulator { values: self.values.map(f), _kind: PhantomData }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;

    /// Each (row, column) of a tile is some lane's, once.
    fn covers(
        tile: [usize; 2],
        units: usize,
        pack: usize,
        at: impl Fn(usize, usize) -> (usize, usize),
        along_rows: bool,
    ) {
        let mut seen = vec![0u8; tile[0] * tile[1]];
        for lane in 0..32 {
            for i in 0..units {
                let (r, c) = at(lane, i);
                for e in 0..pack {
                    let (r, c) = if along_rows { (r + e, c) } else { (r, c + e) };
                    seen[r * tile[1] + c] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{seen:?}");
    }

    #[test]
    #[should_panic(
        expected = "FragmentA::load: a 16 x 16 tile at (8, 0) runs past a 20 x 16 matrix"
    )]
    fn a_tile_past_its_matrix_panics() {
        let a = [bf16::ZERO; 20 * 16];
        FragmentA::<bf16>::load(&Matrix::new(&a, 20, 16), 8, 0);
    }

    #[test]
    fn tf32_split_holds_f32_to_its_last_place() {
        let check = |bits: u32| {
            let x = f32::from_bits(bits);
            let [head, tail] = split_tf32(bits);
            // The head is `cvt.rna.tf32.f32`'s; head and tail sum to x exactly.
            assert_eq!(head, imp::to_tf32(bits), "{x:e}");
            let (head, tail) = (f32::from_bits(head), f32::from_bits(tail));
            assert_eq!(f64::from(head) + f64::from(tail), f64::from(x), "{x:e}");
            // What the tensor cores read of the tail, truncated to TF32, misses x by a unit
            // of its last place at most (2^-136, TF32's spacing there, where the tail is
            // subnormal).
            let read = f32::from_bits(tail.to_bits() & !0x1fff);
            let miss = (f64::from(head) + f64::from(read) - f64::from(x)).abs();
            let ulp = f64::from(f32::from_bits(bits & 0x7f80_0000)) * 2f64.powi(-23);
            assert!(miss <= ulp.max(2f64.powi(-136)), "{x:e}: {miss:e}");
        };
        let mut bits = 1u32;
        for i in 0..100_000u32 {
            // Bit patterns across the exponent range and signs, short of the top binade.
            bits = bits.wrapping_mul(2_654_435_761).rotate_left(7) ^ i;
            if f32::from_bits(bits).abs() < 2f32.powi(127) {
                check(bits);
            }
        }
        // Ties, away from zero; the largest value that rounds down.
        for bits in [0x3f80_1000, 0xbf80_1000, 0x3f80_3000, 0x7f7f_efff, 0x0000_1000] {
            check(bits);
        }
        assert_eq!(split_tf32(0x3f80_1000)[0], 0x3f80_2000);
        assert_eq!(split_tf32(0x8000_0000), [0x8000_0000, 0]); // -0
        // What rounds to infinity: its tail is minus infinity; NaN and infinity: a NaN tail.
        assert_eq!(split_tf32(0x7f7f_f000), [0x7f80_0000, 0xff80_0000]);
        for bits in [0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0x7f80_0001, 0x7fff_ffff, 0xffff_ffff] {
            let [head, tail] = split_tf32(bits);
            assert!(f32::from_bits(tail).is_nan(), "{bits:#x}: head {head:#x}, tail {tail:#x}");
        }
    }

    #[test]
    fn every_element_has_one_place() {
        covers([16, 16], 4, 2, a_position::<bf16>, false);
        covers([16, 8], 4, 1, a_position::<Tf32>, false);
        covers([16, 8], 2, 2, b_position::<f16>, true);
        covers([8, 8], 2, 1, b_position::<f64>, true);
        covers([16, 8], 4, 1, accumulator_position, false);
    }
}
