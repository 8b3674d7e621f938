//! The tensor-core instructions on NVIDIA GPUs, one `asm!` each.
//!
//! None is `pure`: LLVM may not sink a warp-wide instruction into a branch some lanes skip, or
//! drop one whose result looks unused.

/// `cvt.rna.tf32.f32`: `f32` bits rounded to TF32 (to nearest, ties away from zero), the low
/// 13 bits cleared.
#[inline(always)]
pub(super) fn to_tf32(bits: u32) -> u32 {
    let d: u32;
    // SAFETY: a register conversion, defined for every input.
    unsafe {
        core::arch::asm!(
            "cvt.rna.tf32.f32 {d}, {x};",
            d = out(reg32) d,
            x = in(reg32) f32::from_bits(bits),
            options(pure, nomem, nostack),
        )
    };
    d
}

/// `mma.sync.aligned.m16n8k*.row.col.f32.TYPE.TYPE.f32` with the accumulator in place.
macro_rules! mma32 {
    ($name:ident, $shape:literal, $ty:literal) => {
        #[inline(always)]
        pub(super) fn $name(a: &[u32; 4], b: &[u32; 2], c: &mut [f32; 4]) {
            // SAFETY: a register operation of the whole warp, which every lane executes (the
            // callers' contract).
            unsafe {
                core::arch::asm!(
                    concat!(
                        "mma.sync.aligned.", $shape, ".row.col.f32.", $ty, ".", $ty, ".f32 ",
                        "{{{c0}, {c1}, {c2}, {c3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, ",
                        "{{{c0}, {c1}, {c2}, {c3}}};"
                    ),
                    c0 = inout(reg32) c[0],
                    c1 = inout(reg32) c[1],
                    c2 = inout(reg32) c[2],
                    c3 = inout(reg32) c[3],
                    a0 = in(reg32) a[0],
                    a1 = in(reg32) a[1],
                    a2 = in(reg32) a[2],
                    a3 = in(reg32) a[3],
                    b0 = in(reg32) b[0],
                    b1 = in(reg32) b[1],
                    options(nomem, nostack),
                )
            }
        }
    };
}
mma32!(mma_bf16, "m16n8k16", "bf16");
mma32!(mma_f16, "m16n8k16", "f16");
mma32!(mma_tf32, "m16n8k8", "tf32");

/// `c += a * b` of a 16 x 8 x 8 product in `f64`: one `mma.sync.aligned.m16n8k8` on sm_90.
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub(super) fn mma_f64(a: &[f64; 4], b: &[f64; 2], c: &mut [f64; 4]) {
    // SAFETY: as in `mma_bf16`.
    unsafe {
        core::arch::asm!(
            "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {{{c0}, {c1}, {c2}, {c3}}}, \
             {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};",
            c0 = inout(reg64) c[0],
            c1 = inout(reg64) c[1],
            c2 = inout(reg64) c[2],
            c3 = inout(reg64) c[3],
            a0 = in(reg64) a[0],
            a1 = in(reg64) a[1],
            a2 = in(reg64) a[2],
            a3 = in(reg64) a[3],
            b0 = in(reg64) b[0],
            b1 = in(reg64) b[1],
            options(nomem, nostack),
        )
    }
}

/// Before sm_90: the same product as four `m8n8k4` (rows 0-7 and 8-15, k 0-3 and 4-7), whose
/// fragments are the quarters of the m16n8k8 ones.
#[cfg(not(target_feature = "sm_90"))]
#[inline(always)]
pub(super) fn mma_f64(a: &[f64; 4], b: &[f64; 2], c: &mut [f64; 4]) {
    for (i, &a) in a.iter().enumerate() {
        let (half, b) = (i % 2, b[i / 2]);
        let (c0, c1) = c.split_at_mut(2);
        let c = if half == 0 { c0 } else { c1 };
        // SAFETY: as in `mma_bf16`.
        unsafe {
            core::arch::asm!(
                "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{{c0}, {c1}}}, {{{a}}}, {{{b}}}, \
                 {{{c0}, {c1}}};",
                c0 = inout(reg64) c[0],
                c1 = inout(reg64) c[1],
                a = in(reg64) a,
                b = in(reg64) b,
                options(nomem, nostack),
            )
        }
    }
}

/// `ldmatrix.sync.aligned.m8n8.xX[.trans].shared.b16`: `X` 8 x 8 matrices of 16-bit elements,
/// lanes `8m` to `8m + 7` giving the rows of matrix `m`: each lane's row the 16 bytes of
/// `tile` from `lane_offset` elements after `(row, col)` on.
///
/// # Safety
/// In every lane whose address the instruction reads (lanes 0 to `8X - 1`), those 16 bytes
/// are in bounds of the memory, at a multiple of 16 bytes.
#[inline(always)]
pub(super) unsafe fn ldmatrix<T: crate::DeviceCopy, const X: usize, const TRANS: bool>(
    tile: &crate::gpu::SharedMatrix<T>,
    row: usize,
    col: usize,
    lane_offset: usize,
) -> [u32; X] {
    let address = tile.window_address(row, col, lane_offset);
    let mut r = [0u32; 4];
    macro_rules! ldmatrix {
        ($shape:literal, $regs:literal, $($reg:ident = $i:literal),+) => {
            // SAFETY: the caller's; the instruction reads the rows and nothing else.
            unsafe {
                core::arch::asm!(
                    concat!("ldmatrix.sync.aligned.m8n8.", $shape, ".shared.b16 ", $regs, ", [{a}];"),
                    a = in(reg32) address,
                    $($reg = out(reg32) r[$i],)+
                    options(readonly, nostack),
                )
            }
        };
    }
    match (X, TRANS) {
        (2, false) => ldmatrix!("x2", "{{{r0}, {r1}}}", r0 = 0, r1 = 1),
        (2, true) => ldmatrix!("x2.trans", "{{{r0}, {r1}}}", r0 = 0, r1 = 1),
        (4, false) => ldmatrix!("x4", "{{{r0}, {r1}, {r2}, {r3}}}", r0 = 0, r1 = 1, r2 = 2, r3 = 3),
        (4, true) => {
            ldmatrix!("x4.trans", "{{{r0}, {r1}, {r2}, {r3}}}", r0 = 0, r1 = 1, r2 = 2, r3 = 3)
        }
        _ => unreachable!("ldmatrix of 2 or 4 matrices"),
    }
    core::array::from_fn(|i| r[i])
}
