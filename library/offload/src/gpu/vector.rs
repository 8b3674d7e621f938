//! Reading several elements of a slice at once: one bounds check, and on a GPU one vector load
//! where the data happens to be aligned for it (`ld.v4.b32` for 4 `f32`s at a multiple of
//! 16 bytes), as CUDA's `float4` loads make them.
//!
//! A slice's alignment is that of its elements (4 bytes for `f32`): the compiler cannot assume
//! more, and a range of preloaded data may start anywhere. So the address is tested where the
//! call runs, and the load is one vector load or K plain ones; the test costs a comparison, the
//! same in every thread of a warp that reads consecutive aligned groups.

/// The first `K` elements of `data` (panics if it is shorter): on a GPU one vector load where
/// they are 16 bytes at a multiple of 16, else (and in the host-offload image) `K` plain loads.
#[inline(always)]
#[track_caller]
pub fn read_array<T: Copy, const K: usize>(data: &[T]) -> [T; K] {
    let first: &[T; K] = match data.first_chunk() {
        Some(first) => first,
        None => panic!("read_array of {K} elements from a slice of {}", data.len()),
    };
    #[cfg(target_arch = "nvptx64")]
    if size_of::<[T; K]>() == 16 && first.as_ptr().addr().is_multiple_of(16) {
        // SAFETY: 16 readable bytes at a multiple of 16, which are a `[T; K]`.
        return unsafe { imp::load16(first.as_ptr().cast()) };
    }
    *first
}

#[cfg(target_arch = "nvptx64")]
mod imp {
    /// The 16 bytes at `address` in one `ld.v4.b32` (a global address the hardware loads
    /// through the L1 cache like any other): an inline asm, which the optimiser cannot merge
    /// with the plain loads of the unaligned case (it would keep their 4-byte alignment).
    ///
    /// # Safety
    /// `address` must be 16 readable bytes at a multiple of 16, holding an `A` (16 bytes).
    #[inline(always)]
    pub(super) unsafe fn load16<A: Copy>(address: *const u8) -> A {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: per the caller; the asm reads the 16 bytes and nothing else.
        unsafe {
            core::arch::asm!(
                "ld.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                p = in(reg64) address,
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                options(pure, readonly, nostack),
            );
            core::mem::transmute_copy(&[a, b, c, d])
        }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::read_array;

    #[test]
    fn the_first_elements_at_any_alignment() {
        let data: Vec<f32> = (0..12).map(|i| i as f32).collect();
        for start in 0..8 {
            let got: [f32; 4] = read_array(&data[start..]);
            assert_eq!(got, [0, 1, 2, 3].map(|k| (start + k) as f32));
        }
        let three: [u8; 3] = read_array(&[7u8, 8, 9, 10]);
        assert_eq!(three, [7, 8, 9]);
    }

    #[test]
    #[should_panic(expected = "read_array of 4 elements from a slice of 3")]
    fn a_short_slice_panics() {
        let _: [f32; 4] = read_array(&[1.0, 2.0, 3.0]);
    }
}
