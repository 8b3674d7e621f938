//! Atomic read-modify-write operations on data a kernel's threads share.
//!
//! A kernel's `&mut [T]` parameter is the same data in every thread, as in CUDA; a plain
//! `y[0] += v` from many threads loses updates. These functions make one update indivisible:
//! a histogram, a sum, a maximum over the grid. They return the value before the update.
//!
//! ```text
//! #[offload::kernel]
//! pub fn histogram(values: &[u32], bins: &mut [u32]) {
//!     let i = offload::gpu::global_id_x();
//!     if let Some(&v) = values.get(i) {
//!         let bin = v as usize % bins.len();
//!         offload::gpu::atomic::fetch_add(&mut bins[bin], 1);
//!     }
//! }
//! ```
//!
//! Integers use `core`'s atomics (PTX `atom.add`, `atom.max`, ... on a GPU). Floating-point
//! addition is PTX's `atom.add.f32`/`atom.add.f64` on a GPU (f64 needs sm_60 or newer), and a
//! compare-and-swap loop in the host-offload image, whose kernels may run on several threads at
//! once. The ordering is relaxed, as CUDA's `atomicAdd`: the launch's end orders everything
//! before the host reads the data.

use core::sync::atomic::Ordering::Relaxed;
use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64};

mod sealed {
    pub trait Sealed {}
}

/// The types [`fetch_add`] updates atomically: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
pub trait AtomicAdd: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn __fetch_add(target: *mut Self, value: Self) -> Self;
}

/// The types [`fetch_max`] and [`fetch_min`] update atomically: `u32`, `i32`, `u64`, `i64`.
pub trait AtomicOrd: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn __fetch_max(target: *mut Self, value: Self) -> Self;
    #[doc(hidden)]
    unsafe fn __fetch_min(target: *mut Self, value: Self) -> Self;
}

/// Adds `value` to `*target` atomically; returns the value before. Integers wrap on overflow.
#[inline(always)]
pub fn fetch_add<T: AtomicAdd>(target: &mut T, value: T) -> T {
    // SAFETY: `target` is a valid, aligned `T`; other threads reach it only through these
    // atomic operations or after the launch.
    unsafe { T::__fetch_add(target, value) }
}

/// Sets `*target` to the larger of it and `value` atomically; returns the value before.
#[inline(always)]
pub fn fetch_max<T: AtomicOrd>(target: &mut T, value: T) -> T {
    // SAFETY: as in `fetch_add`.
    unsafe { T::__fetch_max(target, value) }
}

/// Sets `*target` to the smaller of it and `value` atomically; returns the value before.
#[inline(always)]
pub fn fetch_min<T: AtomicOrd>(target: &mut T, value: T) -> T {
    // SAFETY: as in `fetch_add`.
    unsafe { T::__fetch_min(target, value) }
}

macro_rules! integer {
    ($t:ty, $atomic:ty) => {
        impl sealed::Sealed for $t {}
        impl AtomicAdd for $t {
            #[inline(always)]
            unsafe fn __fetch_add(target: *mut Self, value: Self) -> Self {
                // SAFETY: the caller's; the atomic type has the integer's size and alignment.
                unsafe { <$atomic>::from_ptr(target) }.fetch_add(value, Relaxed)
            }
        }
        impl AtomicOrd for $t {
            #[inline(always)]
            unsafe fn __fetch_max(target: *mut Self, value: Self) -> Self {
                unsafe { <$atomic>::from_ptr(target) }.fetch_max(value, Relaxed)
            }
            #[inline(always)]
            unsafe fn __fetch_min(target: *mut Self, value: Self) -> Self {
                unsafe { <$atomic>::from_ptr(target) }.fetch_min(value, Relaxed)
            }
        }
    };
}
integer!(u32, AtomicU32);
integer!(i32, AtomicI32);
integer!(u64, AtomicU64);
integer!(i64, AtomicI64);

macro_rules! float {
    ($t:ty, $bits:ty, $atomic:ty, $ptx:literal, $reg:ident) => {
        impl sealed::Sealed for $t {}
        impl AtomicAdd for $t {
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn __fetch_add(target: *mut Self, value: Self) -> Self {
                let old: Self;
                // SAFETY: the caller's: `target` is a valid, aligned float in global memory
                // (a kernel's data), and `atom.add` reads and writes only it.
                unsafe {
                    core::arch::asm!(
                        concat!("atom.add.", $ptx, " {old}, [{target}], {value};"),
                        old = out($reg) old,
                        target = in(reg64) target,
                        value = in($reg) value,
                        options(nostack),
                    )
                };
                old
            }

            #[cfg(not(target_arch = "nvptx64"))]
            #[inline(always)]
            unsafe fn __fetch_add(target: *mut Self, value: Self) -> Self {
                // SAFETY: the caller's; the float's bits have its size and alignment.
                let bits = unsafe { <$atomic>::from_ptr(target.cast::<$bits>()) };
                let old = bits
                    .fetch_update(Relaxed, Relaxed, |b| Some((<$t>::from_bits(b) + value).to_bits()))
                    .unwrap_or_else(|b| b);
                <$t>::from_bits(old)
            }
        }
    };
}
float!(f32, u32, AtomicU32, "f32", reg32);
float!(f64, u64, AtomicU64, "f64", reg64);
