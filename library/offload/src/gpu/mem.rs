//! The C memory functions that code compiled for nvptx64 calls and nothing there defines.
//!
//! `==` on arrays and slices of bytes-like data (and `str`) compares through `memcmp`, which
//! LLVM may turn into `bcmp`; on nvptx64 no library provides either, and the module must be
//! self-contained (there is no device linker). The kernels' image links these instead. LLVM
//! expands `memcpy`, `memmove` and `memset` itself on nvptx64.

/// Compares `n` bytes: negative, zero or positive as the first differing byte of `a` is
/// smaller than, equal to or larger than `b`'s.
///
/// # Safety
/// `a` and `b` must be readable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: the caller's: both are readable for `n` bytes.
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

/// Whether `n` bytes are equal: zero if they are.
///
/// # Safety
/// As [`memcmp`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller's.
    unsafe { memcmp(a, b, n) }
}
