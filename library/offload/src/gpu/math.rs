//! Floating-point functions for kernels, on every device.
//!
//! The NVIDIA image compiles kernels with `core` alone, which has no `f32::sqrt`, `f64::floor`
//! or `f32::sin`: those are `std`'s (they call the C library). The functions here are the same
//! operations, compiled to the GPU's own instructions on nvptx and to `std`'s methods in the
//! x86_64 host-offload image, so a kernel computes the same thing wherever it runs:
//!
//! ```
//! use offload::gpu::math;
//!
//! #[offload::kernel]
//! pub fn normalise(x: &[f32], y: &mut [f32]) {
//!     let i = offload::gpu::global_id_x();
//!     if i < y.len() {
//!         y[i] = x[i] / math::sqrt(math::mul_add(x[i], x[i], 1.0));
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! - Exact on both (correctly rounded, as IEEE 754 asks): [`sqrt`], [`mul_add`] (one rounding),
//!   [`floor`], [`ceil`], [`trunc`], [`round`] (half away from zero), and `core`'s own `abs`,
//!   `min`, `max`, `copysign`, which kernels can call as methods.
//! - Fast approximations, `f32` only: [`fast_exp2`], [`fast_log2`], [`fast_exp`], [`fast_ln`],
//!   [`fast_sin`], [`fast_cos`]. On a GPU these are PTX's `.approx` instructions (what CUDA's
//!   `__expf`, `__sinf` and the like compile to), with their error bounds (for `fast_sin` and
//!   `fast_cos`, an absolute error of at most 2^-20.9 within -pi..pi, and growing outside it;
//!   `fast_exp2` and `fast_log2` within 2 and 4 units in the last place of the result). In the
//!   host-offload image they are `std`'s correctly computed functions, so the two devices may
//!   differ in the last bits.

/// The floating-point types of the functions of [`math`](self): `f32` and `f64`.
pub trait Float: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn __sqrt(self) -> Self;
    #[doc(hidden)]
    fn __mul_add(self, a: Self, b: Self) -> Self;
    #[doc(hidden)]
    fn __floor(self) -> Self;
    #[doc(hidden)]
    fn __ceil(self) -> Self;
    #[doc(hidden)]
    fn __trunc(self) -> Self;
    #[doc(hidden)]
    fn __round(self) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The square root, correctly rounded (NaN below zero).
#[inline(always)]
pub fn sqrt<F: Float>(x: F) -> F {
    x.__sqrt()
}

/// `x * a + b` with one rounding (a fused multiply-add).
#[inline(always)]
pub fn mul_add<F: Float>(x: F, a: F, b: F) -> F {
    x.__mul_add(a, b)
}

/// The largest integer at most `x`.
#[inline(always)]
pub fn floor<F: Float>(x: F) -> F {
    x.__floor()
}

/// The smallest integer at least `x`.
#[inline(always)]
pub fn ceil<F: Float>(x: F) -> F {
    x.__ceil()
}

/// The integer part of `x` (rounded toward zero).
#[inline(always)]
pub fn trunc<F: Float>(x: F) -> F {
    x.__trunc()
}

/// The nearest integer to `x`, halves rounded away from zero (as `f32::round`).
#[inline(always)]
pub fn round<F: Float>(x: F) -> F {
    x.__round()
}

#[cfg(target_arch = "nvptx64")]
mod imp {
    use core::intrinsics;

    macro_rules! float {
        ($t:ty, $sqrt:ident, $fma:ident, $floor:ident, $ceil:ident, $trunc:ident, $round:ident) => {
            impl super::Float for $t {
                #[inline(always)]
                fn __sqrt(self) -> Self {
                    intrinsics::$sqrt(self)
                }
                #[inline(always)]
                fn __mul_add(self, a: Self, b: Self) -> Self {
                    intrinsics::$fma(self, a, b)
                }
                #[inline(always)]
                fn __floor(self) -> Self {
                    intrinsics::$floor(self)
                }
                #[inline(always)]
                fn __ceil(self) -> Self {
                    intrinsics::$ceil(self)
                }
                #[inline(always)]
                fn __trunc(self) -> Self {
                    intrinsics::$trunc(self)
                }
                #[inline(always)]
                fn __round(self) -> Self {
                    intrinsics::$round(self)
                }
            }
        };
    }
    float!(f32, sqrtf32, fmaf32, floorf32, ceilf32, truncf32, roundf32);
    float!(f64, sqrtf64, fmaf64, floorf64, ceilf64, truncf64, roundf64);

    unsafe extern "C" {
        #[link_name = "llvm.nvvm.ex2.approx.f"]
        fn ex2_approx(x: f32) -> f32;
        #[link_name = "llvm.nvvm.lg2.approx.f"]
        fn lg2_approx(x: f32) -> f32;
        #[link_name = "llvm.nvvm.sin.approx.f"]
        fn sin_approx(x: f32) -> f32;
        #[link_name = "llvm.nvvm.cos.approx.f"]
        fn cos_approx(x: f32) -> f32;
    }

    // SAFETY (all four): the PTX instructions are defined for every input.
    #[inline(always)]
    pub(super) fn exp2(x: f32) -> f32 {
        unsafe { ex2_approx(x) }
    }
    #[inline(always)]
    pub(super) fn log2(x: f32) -> f32 {
        unsafe { lg2_approx(x) }
    }
    #[inline(always)]
    pub(super) fn sin(x: f32) -> f32 {
        unsafe { sin_approx(x) }
    }
    #[inline(always)]
    pub(super) fn cos(x: f32) -> f32 {
        unsafe { cos_approx(x) }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    macro_rules! float {
        ($t:ty) => {
            impl super::Float for $t {
                #[inline(always)]
                fn __sqrt(self) -> Self {
                    self.sqrt()
                }
                #[inline(always)]
                fn __mul_add(self, a: Self, b: Self) -> Self {
                    self.mul_add(a, b)
                }
                #[inline(always)]
                fn __floor(self) -> Self {
                    self.floor()
                }
                #[inline(always)]
                fn __ceil(self) -> Self {
                    self.ceil()
                }
                #[inline(always)]
                fn __trunc(self) -> Self {
                    self.trunc()
                }
                #[inline(always)]
                fn __round(self) -> Self {
                    self.round()
                }
            }
        };
    }
    float!(f32);
    float!(f64);

    #[inline(always)]
    pub(super) fn exp2(x: f32) -> f32 {
        x.exp2()
    }
    #[inline(always)]
    pub(super) fn log2(x: f32) -> f32 {
        x.log2()
    }
    #[inline(always)]
    pub(super) fn sin(x: f32) -> f32 {
        x.sin()
    }
    #[inline(always)]
    pub(super) fn cos(x: f32) -> f32 {
        x.cos()
    }
}

/// 2 to the power `x`, approximately (see the [module](self)).
#[inline(always)]
pub fn fast_exp2(x: f32) -> f32 {
    imp::exp2(x)
}

/// The base-2 logarithm of `x`, approximately (see the [module](self)).
#[inline(always)]
pub fn fast_log2(x: f32) -> f32 {
    imp::log2(x)
}

/// e to the power `x`, approximately: `fast_exp2(x * log2(e))`, as CUDA's `__expf`.
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    fast_exp2(x * core::f32::consts::LOG2_E)
}

/// The natural logarithm of `x`, approximately: `fast_log2(x) * ln(2)`, as CUDA's `__logf`.
#[inline(always)]
pub fn fast_ln(x: f32) -> f32 {
    fast_log2(x) * core::f32::consts::LN_2
}

/// The sine of `x` (radians), approximately (see the [module](self)).
#[inline(always)]
pub fn fast_sin(x: f32) -> f32 {
    imp::sin(x)
}

/// The cosine of `x` (radians), approximately (see the [module](self)).
#[inline(always)]
pub fn fast_cos(x: f32) -> f32 {
    imp::cos(x)
}
