//! The routines on the host-offload plugin's devices, whose data is in this process's memory at
//! the guards' device addresses: computed on the CPU, at once.

use core::ptr::NonNull;

use crate::element::Real;

/// The `len` elements at host address `addr` (a host-offload device's), for reading.
///
/// # Safety
/// `addr` is a host-offload mapping of at least `len` elements that a live guard keeps, and
/// nothing writes it while the slice lives.
pub(crate) unsafe fn slice<'a, T>(addr: u64, len: usize) -> &'a [T] {
    let ptr = if len == 0 { NonNull::dangling().as_ptr() } else { addr as usize as *const T };
    // SAFETY: per the caller.
    unsafe { core::slice::from_raw_parts(ptr, len) }
}

/// As [`slice`], for writing.
///
/// # Safety
/// As [`slice`], and nothing else reads or writes it while the slice lives.
pub(crate) unsafe fn slice_mut<'a, T>(addr: u64, len: usize) -> &'a mut [T] {
    let ptr = if len == 0 { NonNull::dangling().as_ptr() } else { addr as usize as *mut T };
    // SAFETY: per the caller.
    unsafe { core::slice::from_raw_parts_mut(ptr, len) }
}

pub(crate) fn axpy<T: Real>(alpha: T, x: &[T], y: &mut [T]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y = T::axpy(alpha, x, *y);
    }
}

/// The dot product, summed in `f64`.
pub(crate) fn dot<T: Real>(x: &[T], y: &[T]) -> T {
    T::from_f64(x.iter().zip(y).map(|(&x, &y)| x.to_f64() * y.to_f64()).sum())
}

/// The Euclidean norm, summed in `f64` and scaled by the largest magnitude, so that neither
/// overflows nor underflows where the result does not.
pub(crate) fn nrm2<T: Real>(x: &[T]) -> T {
    if x.iter().any(|v| v.to_f64().is_nan()) {
        return T::from_f64(f64::NAN);
    }
    let scale = x.iter().fold(0.0f64, |m, &v| m.max(v.to_f64().abs()));
    if scale == 0.0 || !scale.is_finite() {
        return T::from_f64(scale);
    }
    let sum: f64 = x.iter().map(|&v| (v.to_f64() / scale).powi(2)).sum();
    T::from_f64(scale * sum.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_one_routines_on_the_cpu() {
        let mut y = [1.0f32, 2.0, 3.0];
        axpy(2.0, &[1.0, 1.0, -1.0], &mut y);
        assert_eq!(y, [3.0, 4.0, 1.0]);
        assert_eq!(dot(&[1.0f64, 2.0, 3.0], &[4.0, 5.0, 6.0]), 32.0);
        assert_eq!(nrm2(&[3.0f32, 4.0]), 5.0);
        assert_eq!(nrm2(&[3e30f32, 4e30]), 5e30, "no overflow in the squares");
        assert_eq!(nrm2::<f64>(&[]), 0.0);
        assert!(nrm2(&[1.0f32, f32::INFINITY]).is_infinite());
        assert!(nrm2(&[f64::NAN, 1e300]).is_nan());
    }
}
