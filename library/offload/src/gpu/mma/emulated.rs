//! The tensor-core instructions in the host-offload image: the warp's lanes put in their
//! fragments (or `ldmatrix` row addresses) through the warp operations' exchange, and each
//! computes its own part of the result as the hardware gives it.

use crate::gpu::warp::WARP_SIZE;
use crate::gpu::warp_imp::{PAYLOAD, gather};
use crate::{bf16, f16};

/// `f32` bits rounded to TF32, as `cvt.rna.tf32.f32`: to nearest, ties away from zero, the low
/// 13 bits cleared (infinities as they are, a NaN as the canonical one, which stays a NaN
/// when the tensor cores drop its low bits).
pub(super) fn to_tf32(bits: u32) -> u32 {
    let x = f32::from_bits(bits);
    if x.is_nan() {
        0x7fff_ffff
    } else if x.is_finite() {
        super::round_tf32(bits)
    } else {
        bits
    }
}

/// Every lane's A and B units, as the lanes put them in, for the caller's part of a product.
struct Operands {
    words: [[u64; PAYLOAD]; WARP_SIZE],
    lane: usize,
    /// Elements in a unit.
    pack: usize,
}

impl Operands {
    fn gather(a: [u64; 4], b: [u64; 2], pack: usize) -> Operands {
        let mut words = [0; PAYLOAD];
        words[..4].copy_from_slice(&a);
        words[4..6].copy_from_slice(&b);
        let (words, lane) = gather(words, "mma");
        Operands { words, lane, pack }
    }

    /// The unit holding A's `(row, k)` and the element's place in it (the layout of
    /// `super::a_position`, inverted).
    fn a(&self, row: usize, k: usize) -> (u64, usize) {
        let u = k / self.pack;
        (self.words[4 * (row % 8) + u % 4][row / 8 + 2 * (u / 4)], k % self.pack)
    }

    /// The unit holding B's `(k, col)` and the element's place in it (`super::b_position`).
    fn b(&self, k: usize, col: usize) -> (u64, usize) {
        let u = k / self.pack;
        (self.words[4 * col + u % 4][4 + u / 4], k % self.pack)
    }
}

/// `c += a * b` over 32-bit units of `pack` elements of depth `k`, `value` reading an element
/// of a unit: each product exact in `f64`, their sum added to `c` and rounded once to `f32`.
fn mma_f32(
    a: &[u32; 4],
    b: &[u32; 2],
    c: &mut [f32; 4],
    (k, pack): (usize, usize),
    value: fn(u32, usize) -> f64,
) {
    let ops = Operands::gather(a.map(u64::from), b.map(u64::from), pack);
    for (i, c) in c.iter_mut().enumerate() {
        let (row, col) = super::accumulator_position(ops.lane, i);
        let sum: f64 = (0..k)
            .map(|k| {
                let ((u, e), (v, f)) = (ops.a(row, k), ops.b(k, col));
                value(u as u32, e) * value(v as u32, f)
            })
            .sum();
        *c = (f64::from(*c) + sum) as f32;
    }
}

/// The 16-bit element `e` (0: the low half) of a unit.
fn half16(unit: u32, e: usize) -> u16 {
    (unit >> (16 * e)) as u16
}

pub(super) fn mma_bf16(a: &[u32; 4], b: &[u32; 2], c: &mut [f32; 4]) {
    mma_f32(a, b, c, (16, 2), |u, e| bf16::from_bits(half16(u, e)).to_f64())
}

pub(super) fn mma_f16(a: &[u32; 4], b: &[u32; 2], c: &mut [f32; 4]) {
    mma_f32(a, b, c, (16, 2), |u, e| f16::from_bits(half16(u, e)).to_f64())
}

/// As the tensor cores, which read the high 19 bits of each operand: the TF32 value truncated.
pub(super) fn mma_tf32(a: &[u32; 4], b: &[u32; 2], c: &mut [f32; 4]) {
    mma_f32(a, b, c, (8, 1), |u, _| f64::from(f32::from_bits(u & !0x1fff)))
}

/// `c += a * b` in `f64`, a fused multiply-add per step of k.
pub(super) fn mma_f64(a: &[f64; 4], b: &[f64; 2], c: &mut [f64; 4]) {
    let ops = Operands::gather(a.map(f64::to_bits), b.map(f64::to_bits), 1);
    for (i, c) in c.iter_mut().enumerate() {
        let (row, col) = super::accumulator_position(ops.lane, i);
        for k in 0..8 {
            let (a, b) = (f64::from_bits(ops.a(row, k).0), f64::from_bits(ops.b(k, col).0));
            *c = a.mul_add(b, *c);
        }
    }
}

/// `ldmatrix.sync.aligned.m8n8.xX[.trans].shared.b16`: the lanes put in the addresses of their
/// rows (`lane_offset` elements after `(row, col)` of `tile` on), and each reads its two
/// elements of each matrix `m` from the rows lanes `8m` to `8m + 7` gave: row `lane / 4`,
/// columns `2 (lane % 4)` and the next (transposed: rows `2 (lane % 4)` and the next, column
/// `lane / 4`).
///
/// # Safety
/// Those 16 bytes are in bounds of the memory, in every lane whose address is read (lanes 0
/// to `8X - 1`).
pub(super) unsafe fn ldmatrix<T: crate::DeviceCopy, const X: usize, const TRANS: bool>(
    tile: &crate::gpu::SharedMatrix<T>,
    row: usize,
    col: usize,
    lane_offset: usize,
) -> [u32; X] {
    // SAFETY: in bounds (the caller's).
    let row = unsafe { tile.memory().as_ptr().add(tile.index(row, col) + lane_offset) };
    let row = row.cast::<u16>();
    let mut words = [0; PAYLOAD];
    words[0] = row as u64;
    let (words, lane) = gather(words, "ldmatrix");
    core::array::from_fn(|m| {
        let element = |j: usize| {
            let (source, column) = if TRANS {
                (8 * m + 2 * (lane % 4) + j, lane / 4)
            } else {
                (8 * m + lane / 4, 2 * (lane % 4) + j)
            };
            // SAFETY: lane `source`'s row, 8 elements (the caller's); `column < 8`.
            unsafe { *(words[source][0] as *const u16).add(column) }
        };
        u32::from(element(0)) | u32::from(element(1)) << 16
    })
}
