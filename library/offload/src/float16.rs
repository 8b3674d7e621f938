//! The 16-bit floats: [`bf16`] (bfloat16: f32's exponent, 8 bits of significand) and [`f16`]
//! (IEEE binary16), for kernels and for the data a program preloads.
//!
//! Both are plain data ([`DeviceCopy`](crate::DeviceCopy)) of the layout the GPU and the
//! `half` crate use: the 16 bits, nothing else. In kernels compiled for NVIDIA GPUs the
//! conversions and the arithmetic are the hardware's instructions (`cvt.rn.bf16.f32`,
//! `add.rn.bf16`, `fma.rn.f16`, ...); elsewhere (the host, the host-offload image) the same
//! operations give the same bits, computed in wider floats and rounded once: to nearest, ties to
//! even, as every operation here rounds. Division goes through `f32` on every device (the GPU
//! has no 16-bit division).
//!
//! On the host both convert to and from the `half` crate's types of the same name, by value
//! (`From`) and as whole slices without a copy ([`bf16::from_half_slice`],
//! [`bf16::as_half_slice`]), so data made by crates that use `half` can be preloaded as it is.
//!
//! ```
//! use offload::bf16;
//!
//! let x = bf16::from_f32(1.0 / 3.0);
//! assert_eq!(x.to_bits(), 0x3eab); // 0.333984375, the nearest bfloat16
//! assert_eq!((x + x).to_f32(), 0.66796875);
//! ```

macro_rules! float16 {
    (
        $(#[$doc:meta])*
        $name:ident, one = $one:literal, epsilon = $eps:literal, max = $max:literal,
        min_positive = $min_positive:literal, exponent = $exponent:literal
    ) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Default)]
        #[repr(transparent)]
        pub struct $name(u16);

        // SAFETY: 16 bits, no padding, and every pattern is a value (NaNs among them).
        unsafe impl crate::DeviceCopy for $name {}

        impl $name {
            /// 0.
            pub const ZERO: $name = $name(0);
            /// 1.
            pub const ONE: $name = $name($one);
            /// The largest finite value.
            pub const MAX: $name = $name($max);
            /// The smallest finite value (`-MAX`).
            pub const MIN: $name = $name($max | SIGN);
            /// The smallest positive normal value.
            pub const MIN_POSITIVE: $name = $name($min_positive);
            /// The difference between 1 and the next larger value.
            pub const EPSILON: $name = $name($eps);
            /// Positive infinity.
            pub const INFINITY: $name = $name($exponent);
            /// Negative infinity.
            pub const NEG_INFINITY: $name = $name($exponent | SIGN);
            /// A quiet NaN.
            pub const NAN: $name = $name($exponent | (($exponent & !($exponent << 1)) >> 1));

            /// The value with these bits.
            #[inline(always)]
            pub const fn from_bits(bits: u16) -> $name {
                $name(bits)
            }

            /// The value's bits.
            #[inline(always)]
            pub const fn to_bits(self) -> u16 {
                self.0
            }

            /// `x`, rounded to the nearest value (ties to even): NaN stays NaN, and values past
            /// the largest become infinite.
            #[inline(always)]
            pub fn from_f32(x: f32) -> $name {
                $name(imp::$name::from_f32(x))
            }

            /// The value as an `f32`, exactly.
            #[inline(always)]
            pub fn to_f32(self) -> f32 {
                imp::$name::to_f32(self.0)
            }

            /// The value as an `f64`, exactly.
            #[inline(always)]
            pub fn to_f64(self) -> f64 {
                f64::from(self.to_f32())
            }

            /// Whether the value is a NaN.
            #[inline(always)]
            pub const fn is_nan(self) -> bool {
                self.0 & !SIGN > $exponent
            }

            /// Whether the value is neither infinite nor NaN.
            #[inline(always)]
            pub const fn is_finite(self) -> bool {
                self.0 & $exponent != $exponent
            }

            /// Whether the sign bit is set (negative numbers, -0, NaNs with the bit).
            #[inline(always)]
            pub const fn is_sign_negative(self) -> bool {
                self.0 & SIGN != 0
            }

            /// The absolute value (the sign bit cleared).
            #[inline(always)]
            pub const fn abs(self) -> $name {
                $name(self.0 & !SIGN)
            }

            /// `self * a + b` with one rounding (a fused multiply-add).
            #[inline(always)]
            pub fn mul_add(self, a: $name, b: $name) -> $name {
                $name(imp::$name::fma(self.0, a.0, b.0))
            }
        }

        impl From<$name> for f32 {
            #[inline(always)]
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        impl From<$name> for f64 {
            #[inline(always)]
            fn from(x: $name) -> f64 {
                x.to_f64()
            }
        }

        impl PartialEq for $name {
            /// IEEE equality: `-0 == 0`, and a NaN equals nothing.
            #[inline(always)]
            fn eq(&self, other: &$name) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $name {
            #[inline(always)]
            fn partial_cmp(&self, other: &$name) -> Option<core::cmp::Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl core::ops::Neg for $name {
            type Output = $name;
            #[inline(always)]
            fn neg(self) -> $name {
                $name(self.0 ^ SIGN)
            }
        }

        float16!(@op $name, Add, add, AddAssign, add_assign);
        float16!(@op $name, Sub, sub, SubAssign, sub_assign);
        float16!(@op $name, Mul, mul, MulAssign, mul_assign);

        impl core::ops::Div for $name {
            type Output = $name;
            /// Through `f32` (exact there, or rounded with bits to spare): the quotient rounded
            /// once to nearest.
            #[inline(always)]
            fn div(self, rhs: $name) -> $name {
                $name::from_f32(self.to_f32() / rhs.to_f32())
            }
        }

        impl core::ops::DivAssign for $name {
            #[inline(always)]
            fn div_assign(&mut self, rhs: $name) {
                *self = *self / rhs;
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Display::fmt(&self.to_f32(), f)
            }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        impl From<half::$name> for $name {
            #[inline(always)]
            fn from(x: half::$name) -> $name {
                $name(x.to_bits())
            }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        impl From<$name> for half::$name {
            #[inline(always)]
            fn from(x: $name) -> half::$name {
                half::$name::from_bits(x.0)
            }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        impl $name {
            #[doc = concat!("`half::", stringify!($name), "`s as `", stringify!($name),
                "`s, without a copy.")]
            #[inline(always)]
            pub fn from_half_slice(values: &[half::$name]) -> &[$name] {
                // SAFETY: both are `repr(transparent)` over `u16`, every pattern a value.
                unsafe { core::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
            }

            #[doc = concat!("`half::", stringify!($name), "`s as `", stringify!($name),
                "`s to write, without a copy.")]
            #[inline(always)]
            pub fn from_half_slice_mut(values: &mut [half::$name]) -> &mut [$name] {
                // SAFETY: as in `from_half_slice`; the borrow is handed on.
                unsafe {
                    core::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), values.len())
                }
            }

            #[doc = concat!("The values as `half::", stringify!($name), "`s, without a copy.")]
            #[inline(always)]
            pub fn as_half_slice(values: &[$name]) -> &[half::$name] {
                // SAFETY: as in `from_half_slice`.
                unsafe { core::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
            }
        }
    };
    (@op $name:ident, $trait:ident, $method:ident, $assign:ident, $assign_method:ident) => {
        impl core::ops::$trait for $name {
            type Output = $name;
            /// Rounded once, to nearest (ties to even).
            #[inline(always)]
            fn $method(self, rhs: $name) -> $name {
                $name(imp::$name::$method(self.0, rhs.0))
            }
        }

        impl core::ops::$assign for $name {
            #[inline(always)]
            fn $assign_method(&mut self, rhs: $name) {
                *self = core::ops::$trait::$method(*self, rhs);
            }
        }
    };
}

/// The sign bit of both formats.
const SIGN: u16 = 0x8000;

float16!(
    /// bfloat16: the sign, f32's 8 exponent bits, 7 stored bits of significand. As wide a range
    /// as `f32`, with about 3 significant digits: the tensor cores' usual input.
    bf16, one = 0x3f80, epsilon = 0x3c00, max = 0x7f7f, min_positive = 0x0080, exponent = 0x7f80
);

float16!(
    /// IEEE 754 binary16: the sign, 5 exponent bits, 10 stored bits of significand (up to
    /// 65504, about 3.3 significant digits).
    f16, one = 0x3c00, epsilon = 0x1400, max = 0x7bff, min_positive = 0x0400, exponent = 0x7c00
);

#[cfg(target_arch = "nvptx64")]
mod imp {
    //! One PTX instruction each, sm_80 and later (bf16's `add`, `sub` and `mul` from sm_90).

    /// `OP d, a, ...;` over `.b16` registers (the 16 bits of either format).
    macro_rules! b16 {
        ($op:literal, $($arg:ident),+) => {{
            let d: u16;
            // SAFETY: register arithmetic, defined for every input.
            unsafe {
                core::arch::asm!(
                    concat!($op, " {d}", $(", {", stringify!($arg), "}",)+ ";"),
                    d = out(reg16) d,
                    $($arg = in(reg16) $arg,)+
                    options(pure, nomem, nostack),
                )
            };
            d
        }};
    }

    /// `cvt.rn.TYPE.f32`: an `f32` rounded to nearest (ties to even).
    macro_rules! from_f32 {
        ($ptx:literal) => {
            #[inline(always)]
            pub(crate) fn from_f32(x: f32) -> u16 {
                let d: u16;
                // SAFETY: a register conversion, defined for every input.
                unsafe {
                    core::arch::asm!(
                        concat!("cvt.rn.", $ptx, ".f32 {d}, {x};"),
                        d = out(reg16) d,
                        x = in(reg32) x,
                        options(pure, nomem, nostack),
                    )
                };
                d
            }
        };
    }

    pub(super) mod bf16 {
        from_f32!("bf16");

        /// The high half of an `f32` (what `cvt.f32.bf16` does: the shift is as fast).
        #[inline(always)]
        pub(crate) fn to_f32(x: u16) -> f32 {
            f32::from_bits(u32::from(x) << 16)
        }

        #[inline(always)]
        pub(crate) fn fma(a: u16, b: u16, c: u16) -> u16 {
            b16!("fma.rn.bf16", a, b, c)
        }

        #[cfg(target_feature = "sm_90")]
        #[inline(always)]
        pub(crate) fn add(a: u16, b: u16) -> u16 {
            b16!("add.rn.bf16", a, b)
        }

        #[cfg(target_feature = "sm_90")]
        #[inline(always)]
        pub(crate) fn sub(a: u16, b: u16) -> u16 {
            b16!("sub.rn.bf16", a, b)
        }

        #[cfg(target_feature = "sm_90")]
        #[inline(always)]
        pub(crate) fn mul(a: u16, b: u16) -> u16 {
            b16!("mul.rn.bf16", a, b)
        }

        // Before sm_90 bf16 has only the fused multiply-add: `a * 1 + b`, `b * -1 + a` and
        // `a * b + -0` are the sum, difference and product rounded once (the -0 keeps a zero
        // product's sign), as CUDA's headers compute them there.
        #[cfg(not(target_feature = "sm_90"))]
        #[inline(always)]
        pub(crate) fn add(a: u16, b: u16) -> u16 {
            fma(a, super::super::bf16::ONE.to_bits(), b)
        }

        #[cfg(not(target_feature = "sm_90"))]
        #[inline(always)]
        pub(crate) fn sub(a: u16, b: u16) -> u16 {
            fma(b, (-super::super::bf16::ONE).to_bits(), a)
        }

        #[cfg(not(target_feature = "sm_90"))]
        #[inline(always)]
        pub(crate) fn mul(a: u16, b: u16) -> u16 {
            fma(a, b, super::super::SIGN)
        }
    }

    pub(super) mod f16 {
        from_f32!("f16");

        #[inline(always)]
        pub(crate) fn to_f32(x: u16) -> f32 {
            let d: f32;
            // SAFETY: a register conversion, defined for every input.
            unsafe {
                core::arch::asm!(
                    "cvt.f32.f16 {d}, {x};",
                    d = out(reg32) d,
                    x = in(reg16) x,
                    options(pure, nomem, nostack),
                )
            };
            d
        }

        #[inline(always)]
        pub(crate) fn fma(a: u16, b: u16, c: u16) -> u16 {
            b16!("fma.rn.f16", a, b, c)
        }

        #[inline(always)]
        pub(crate) fn add(a: u16, b: u16) -> u16 {
            b16!("add.rn.f16", a, b)
        }

        #[inline(always)]
        pub(crate) fn sub(a: u16, b: u16) -> u16 {
            b16!("sub.rn.f16", a, b)
        }

        #[inline(always)]
        pub(crate) fn mul(a: u16, b: u16) -> u16 {
            b16!("mul.rn.f16", a, b)
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    //! Through the `half` crate's conversions: the sum, difference or product of two 16-bit
    //! floats is computed in `f32` (exactly, or rounded with more than twice the bits, which
    //! makes rounding again to 16 bits the correctly rounded result); a fused multiply-add in
    //! `f64`, rounded to odd on the way down so that the last rounding is the only one.

    /// `a * b + c`, each a 16-bit float as an `f32`, rounded to odd at `f32`'s precision:
    /// the exact result where `f32` holds it, otherwise its neighbour with an odd last bit (a
    /// value that rounds to 16 bits as the exact result does).
    pub(super) fn fma_to_odd_f32(a: f32, b: f32, c: f32) -> f32 {
        // Exact: each product of two significands of at most 11 bits fits in 53.
        let p = f64::from(a) * f64::from(b);
        let c = f64::from(c);
        let s = p + c;
        // TwoSum: `s + e` is `p + c` exactly.
        let v = s - p;
        let e = (p - (s - v)) + (c - v);
        let s = to_odd(s, e, f64::to_bits, f64::from_bits);
        let f = s as f32;
        to_odd(f, s - f64::from(f), f32::to_bits, f32::from_bits)
    }

    /// `x`, the rounding of `x + error`, rounded to odd instead: `x` where exact or odd,
    /// otherwise its neighbour on the side of `error` (the bits of a float grow with its
    /// magnitude).
    fn to_odd<F: Copy + PartialOrd + Default, B>(
        x: F,
        error: f64,
        bits: fn(F) -> B,
        from_bits: fn(B) -> F,
    ) -> F
    where
        B: Copy
            + core::ops::BitAnd<Output = B>
            + From<u8>
            + PartialEq
            + core::ops::Add<Output = B>
            + core::ops::Sub<Output = B>,
    {
        let one = B::from(1u8);
        if error == 0.0 || error.is_nan() || (bits(x) & one) == one {
            return x;
        }
        let away = (error > 0.0) == (x > F::default());
        from_bits(if away { bits(x) + one } else { bits(x) - one })
    }

    macro_rules! format {
        ($name:ident) => {
            pub(super) mod $name {
                #[inline(always)]
                pub(crate) fn from_f32(x: f32) -> u16 {
                    half::$name::from_f32(x).to_bits()
                }

                #[inline(always)]
                pub(crate) fn to_f32(x: u16) -> f32 {
                    half::$name::from_bits(x).to_f32()
                }

                #[inline(always)]
                pub(crate) fn add(a: u16, b: u16) -> u16 {
                    from_f32(to_f32(a) + to_f32(b))
                }

                #[inline(always)]
                pub(crate) fn sub(a: u16, b: u16) -> u16 {
                    from_f32(to_f32(a) - to_f32(b))
                }

                #[inline(always)]
                pub(crate) fn mul(a: u16, b: u16) -> u16 {
                    from_f32(to_f32(a) * to_f32(b))
                }

                pub(crate) fn fma(a: u16, b: u16, c: u16) -> u16 {
                    from_f32(super::fma_to_odd_f32(to_f32(a), to_f32(b), to_f32(c)))
                }
            }
        };
    }
    format!(bf16);
    format!(f16);
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::{bf16, f16};

    #[test]
    fn conversions_round_to_nearest_even() {
        assert_eq!(bf16::from_f32(1.0).to_bits(), 0x3f80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even one, 1.
        assert_eq!(bf16::from_f32(1.0 + 1.0 / 256.0), bf16::ONE);
        assert_eq!(bf16::from_f32(1.0 + 3.0 / 256.0).to_f32(), 1.0 + 4.0 / 256.0);
        assert_eq!(f16::from_f32(65504.0), f16::MAX);
        assert_eq!(f16::from_f32(65520.0), f16::INFINITY);
        assert!(bf16::from_f32(f32::NAN).is_nan() && f16::NAN.is_nan());
        assert!(!bf16::INFINITY.is_nan() && !bf16::INFINITY.is_finite());
        assert_eq!(bf16::MIN_POSITIVE.to_f32(), f32::MIN_POSITIVE);
        assert_eq!(f16::EPSILON.to_f32(), 2f32.powi(-10));
        assert_eq!(bf16::EPSILON.to_f32(), 2f32.powi(-7));
        assert_eq!(bf16::MAX.to_f32(), f32::from_bits(0x7f7f_0000));
        assert_eq!(bf16::NAN.to_bits(), 0x7fc0);
        assert_eq!(f16::NAN.to_bits(), 0x7e00);
    }

    #[test]
    fn arithmetic_is_rounded_once() {
        let (a, b) = (bf16::from_f32(1.5), bf16::from_f32(0.75));
        assert_eq!((a + b).to_f32(), 2.25);
        assert_eq!((a - b).to_f32(), 0.75);
        assert_eq!((a * b).to_f32(), 1.125);
        assert_eq!((a / b).to_f32(), 2.0);
        assert_eq!((-a).to_f32(), -1.5);
        let mut c = a;
        c += b;
        c *= b;
        assert_eq!(c.to_f32(), bf16::from_f32(2.25 * 0.75).to_f32());
        assert!(bf16::ZERO == -bf16::ZERO && bf16::NAN != bf16::NAN);
        assert!(f16::ONE > f16::ZERO && f16::from_f32(-2.0) < f16::ZERO);
    }

    #[test]
    fn a_fused_multiply_add_rounds_once() {
        // x = 1 + 2^-7: x * x = 1 + 2^-6 + 2^-14 exactly, which rounds to 1 + 2^-6 in bf16.
        let x = bf16::from_f32(1.0 + 1.0 / 128.0);
        let y = bf16::from_f32(1.0 + 1.0 / 64.0);
        assert_eq!(x.mul_add(x, -y).to_f32(), 2f32.powi(-14));
        assert_eq!((x * x - y).to_f32(), 0.0);
        // 2^-6 + 2^-14 is halfway between two bf16s: ties to even.
        assert_eq!(x.mul_add(x, -bf16::ONE).to_f32(), 2f32.powi(-6));
    }

    /// `exact` rounded to the nearest f16, ties to even, found among the neighbours of the f16
    /// nearest its `f32` rounding.
    fn nearest_f16(exact: f64) -> u16 {
        let r = f16::from_f32(exact as f32).to_bits();
        [r.wrapping_sub(1), r, r.wrapping_add(1)]
            .into_iter()
            .map(f16::from_bits)
            .filter(|c| {
                c.is_finite() && c.is_sign_negative() == f16::from_bits(r).is_sign_negative()
            })
            .min_by(|a, b| {
                let (da, db) = ((a.to_f64() - exact).abs(), (b.to_f64() - exact).abs());
                da.total_cmp(&db).then((a.to_bits() & 1).cmp(&(b.to_bits() & 1)))
            })
            .unwrap()
            .to_bits()
    }

    #[test]
    fn fused_multiply_add_matches_a_wide_reference() {
        // f16 triples of both signs around 1, their products and sums exact in f64.
        let values: Vec<f16> =
            (0..40u16).map(|i| f16::from_bits((0x3800 + i * 97 % 0x800) | (i & 1) << 15)).collect();
        for &a in &values {
            for &b in &values {
                for &c in &values {
                    let exact = a.to_f64() * b.to_f64() + c.to_f64();
                    if exact == 0.0 {
                        continue;
                    }
                    assert_eq!(a.mul_add(b, c).to_bits(), nearest_f16(exact), "{a} * {b} + {c}");
                }
            }
        }
    }

    #[test]
    fn the_half_crate_shares_the_bits() {
        let v = vec![half::bf16::from_f32(2.5), half::bf16::from_f32(-0.125)];
        let ours = bf16::from_half_slice(&v);
        assert_eq!(ours[0].to_f32(), 2.5);
        assert_eq!(bf16::as_half_slice(ours), &v[..]);
        assert_eq!(half::f16::from(f16::ONE), half::f16::ONE);
        assert_eq!(f16::from(half::f16::from_f32(0.5)).to_f32(), 0.5);
    }
}
