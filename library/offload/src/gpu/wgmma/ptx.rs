//! `wgmma.mma_async` on sm_90a: one `asm!` a call, from the fences to the wait, so that no
//! other instruction touches the accumulator's registers while the tensor cores write them.
//!
//! Not `pure`: a warpgroup-wide instruction that reads shared memory, which LLVM may neither
//! sink into a branch some threads skip nor drop.

/// The accumulator's registers as a PTX vector operand: `{{{0}, {1}, ...}}`.
macro_rules! registers {
    ([$first:literal $($i:literal)*]) => {
        concat!("{{{", $first, "}", $(", {", $i, "}",)* "}}")
    };
}

/// One `asm!` of k-steps of 16 (`[(a, b, s) ...]`: the operands' names and the step's index)
/// of a `m64nNk16` product, the accumulator `d` in place (`$regs` its indices, given twice:
/// once as a list the template takes whole), step `s`'s descriptors `da[s]` and `db[s]`.
macro_rules! wgmma {
    ($ty:literal, $n:literal, $regs:tt, [$($i:literal)*], $d:ident, $da:ident, $db:ident,
     [$(($a:ident, $b:ident, $s:literal))*]) => {
        // SAFETY: the operands' tiles are shared memory inside the block's (the caller
        // checked them); every thread of the warpgroup executes it (the caller's contract).
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred p;",
                "setp.ne.b32 p, {one}, 0;",
                // Earlier writes of the tiles (made visible by the caller's barrier) before
                // the tensor cores' reads, which go through the async proxy.
                "fence.proxy.async.shared::cta;",
                "wgmma.fence.sync.aligned;",
                $(concat!(
                    "wgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.", $ty, ".", $ty, " ",
                    registers!($regs), ", {", stringify!($a), "}, {", stringify!($b),
                    "}, p, 1, 1, 0, 1;"
                ),)*
                "wgmma.commit_group.sync.aligned;",
                "wgmma.wait_group.sync.aligned 0;",
                "}}",
                $(inout(reg32) $d[$i],)*
                one = in(reg32) 1u32,
                $($a = in(reg64) $da[$s], $b = in(reg64) $db[$s],)*
                options(nostack),
            )
        }
    };
}

/// The step counts (1 to 8) of one type and N.
#[rustfmt::skip]
macro_rules! steps {
    ($ty:literal, $n:literal, $regs:tt, $steps:ident, $da:ident, $db:ident, $d:ident) => {
        match $steps {
            1 => wgmma!($ty, $n, $regs, $regs, $d, $da, $db, [
                (a0, b0, 0)
            ]),
            2 => wgmma!($ty, $n, $regs, $regs, $d, $da, $db, [
                (a0, b0, 0) (a1, b1, 1)
            ]),
            3 => wgmma!($ty, $n, $regs, $regs, $d, $da, $db, [
                (a0, b0, 0) (a1, b1, 1) (a2, b2, 2)
            ]),
            4 => wgmma!($ty, $n, $regs, $regs, $d, $da, $db, [
                (a0, b0, 0) (a1, b1, 1) (a2, b2, 2) (a3, b3, 3)
            ]),
            5 => wgmma!($ty, $n, $regs, $regs, $d, $da, $db, [
                (a0, b0, 0) (a1, b1, 1) (a2, b2, 2) (a3, b3, 3) (a4, b4, 4)
            ]),
            6 => wgmma!($ty, $n, $regs, $regs, $d, $da, $db, [
                (a0, b0, 0) (a1, b1, 1) (a2, b2, 2) (a3, b3, 3) (a4, b4, 4) (a5, b5, 5)
            ]),
            7 => wgmma!($ty, $n, $regs, $regs, $d, $da, $db, [
                (a0, b0, 0) (a1, b1, 1) (a2, b2, 2) (a3, b3, 3) (a4, b4, 4) (a5, b5, 5) (a6, b6, 6)
            ]),
            _ => wgmma!($ty, $n, $regs, $regs, $d, $da, $db, [
                (a0, b0, 0) (a1, b1, 1) (a2, b2, 2) (a3, b3, 3) (a4, b4, 4) (a5, b5, 5) (a6, b6, 6)
                (a7, b7, 7)
            ]),
        }
    };
}

/// Both types' step counts of one N: `f16`'s where `$f16`, else `bf16`'s.
macro_rules! types {
    ($f16:ident, $n:literal, $regs:tt, $steps:ident, $da:ident, $db:ident, $d:ident) => {
        if $f16 {
            steps!("f16", $n, $regs, $steps, $da, $db, $d)
        } else {
            steps!("bf16", $n, $regs, $steps, $da, $db, $d)
        }
    };
}

/// `d += a * b` by the warpgroup: `steps` k-steps of 16 (1 to 8) of a 64 x `8 C` product of
/// `f16` (`f16`) or `bf16` operands, step `s` described by `da[s]` (A, K-major) and `db[s]`
/// (B, N-major), the first `4 C` of `d` the thread's accumulator.
#[rustfmt::skip]
#[inline(always)]
pub(super) fn mma<const C: usize>(
    f16: bool,
    steps: usize,
    da: &[u64; 8],
    db: &[u64; 8],
    d: &mut [f32; 128],
) {
    match C {
        8 => types!(f16, 64, [
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
        ], steps, da, db, d),
        16 => types!(f16, 128, [
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
            61 62 63
        ], steps, da, db, d),
        32 => types!(f16, 256, [
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
            61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89
            90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113
            114 115 116 117 118 119 120 121 122 123 124 125 126 127
        ], steps, da, db, d),
        _ => unreachable!("C is checked by the caller"),
    }
}
