//! Operations across the 32 threads of a warp: shuffles, which read a value another thread of
//! the warp holds, and votes, as CUDA's `__shfl_sync`, `__shfl_up_sync`, `__shfl_down_sync`,
//! `__shfl_xor_sync`, `__all_sync`, `__any_sync` and `__ballot_sync` with the full mask.
//!
//! A warp is 32 threads of a block with consecutive linear indices (x fastest, then y, then
//! z), lane 0 to 31. Every thread of the warp takes part in each operation: all 32 reach it,
//! so a block's size is a multiple of 32 and no thread of a warp has returned before one (a
//! GPU may hang or give anything otherwise). A sum over a warp is [`sum`]: five shuffles down,
//! after which lane 0 holds the warp's sum.
//!
//! On a GPU these are PTX's `shfl.sync` and `vote.sync`. In the host-offload image the first
//! thread of a block that reaches one makes the block's threads run at once from there, as
//! `sync_threads` does, and each thread waits there for the other threads of its warp that have
//! not returned (outside a kernel the operations panic, saying so). A shuffle from a thread that has
//! returned gives the caller's own value there, and a vote counts the threads that have not,
//! as `vote.sync` does on a GPU.
//!
//! A lane, offset or mask is read modulo 32 (its low five bits), as the hardware reads it.

/// Threads in a warp.
pub const WARP_SIZE: usize = 32;

mod sealed {
    pub trait Sealed {}
}

/// What a shuffle moves: `u32`, `i32`, `f32`, `u64`, `i64`, `f64` (64-bit values as two
/// 32-bit shuffles on a GPU).
pub trait WarpValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn __to_bits(self) -> u64;
    #[doc(hidden)]
    fn __from_bits(bits: u64) -> Self;
    #[doc(hidden)]
    const __WIDE: bool;
}

macro_rules! warp_value {
    ($($t:ty => $bits:ty, $wide:literal;)*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpValue for $t {
            #[inline(always)]
            fn __to_bits(self) -> u64 {
                <$bits>::from_ne_bytes(self.to_ne_bytes()) as u64
            }
            #[inline(always)]
            fn __from_bits(bits: u64) -> Self {
                <$t>::from_ne_bytes((bits as $bits).to_ne_bytes())
            }
            const __WIDE: bool = $wide;
        }
    )*};
}
warp_value! {
    u32 => u32, false;
    i32 => u32, false;
    f32 => u32, false;
    u64 => u64, true;
    i64 => u64, true;
    f64 => u64, true;
}

/// How a shuffle picks the lane it reads.
#[derive(Clone, Copy)]
pub(crate) enum Mode {
    /// Lane `n`.
    Index,
    /// Lane `lane + n`; past lane 31 the caller's own value.
    Down,
    /// Lane `lane - n`; before lane 0 the caller's own value.
    Up,
    /// Lane `lane ^ n`.
    Xor,
}

impl Mode {
    /// The lane that `lane` reads for `n` (its low five bits, as the hardware reads it), or
    /// `None` for its own value.
    #[cfg_attr(target_arch = "nvptx64", allow(dead_code))]
    pub(crate) fn source(self, lane: usize, n: usize) -> Option<usize> {
        let n = n % WARP_SIZE;
        match self {
            Mode::Index => Some(n),
            Mode::Down => Some(lane + n).filter(|&s| s < WARP_SIZE),
            Mode::Up => lane.checked_sub(n),
            Mode::Xor => Some(lane ^ n),
        }
    }
}

/// The caller's lane in its warp, 0 to 31.
#[inline(always)]
pub fn lane_id() -> usize {
    imp::lane_id()
}

/// The value `value` of lane `lane` of the warp (`__shfl_sync`).
#[inline(always)]
pub fn shuffle<T: WarpValue>(value: T, lane: usize) -> T {
    imp::shuffle(Mode::Index, value, lane)
}

/// The value of lane `lane_id() + delta`, or the caller's own where that is past lane 31
/// (`__shfl_down_sync`).
#[inline(always)]
pub fn shuffle_down<T: WarpValue>(value: T, delta: usize) -> T {
    imp::shuffle(Mode::Down, value, delta)
}

/// The value of lane `lane_id() - delta`, or the caller's own where that is before lane 0
/// (`__shfl_up_sync`).
#[inline(always)]
pub fn shuffle_up<T: WarpValue>(value: T, delta: usize) -> T {
    imp::shuffle(Mode::Up, value, delta)
}

/// The value of lane `lane_id() ^ mask` (`__shfl_xor_sync`): a butterfly, every lane ending
/// with the same result of a reduction.
#[inline(always)]
pub fn shuffle_xor<T: WarpValue>(value: T, mask: usize) -> T {
    imp::shuffle(Mode::Xor, value, mask)
}

/// The sum of `value` over the warp, complete in lane 0 (the other lanes hold partial sums):
/// five [`shuffle_down`]s, the way a block's reduction starts. (sm_80's `__reduce_add_sync`
/// takes 32-bit integers only.)
#[inline(always)]
pub fn sum<T: WarpValue + core::ops::Add<Output = T>>(mut value: T) -> T {
    for offset in [16, 8, 4, 2, 1] {
        value = value + shuffle_down(value, offset);
    }
    value
}

/// Whether `predicate` holds in every lane of the warp that has not returned (`__all_sync`).
#[inline(always)]
pub fn all(predicate: bool) -> bool {
    imp::all(predicate)
}

/// Whether `predicate` holds in some lane of the warp (`__any_sync`).
#[inline(always)]
pub fn any(predicate: bool) -> bool {
    imp::ballot(predicate) != 0
}

/// The lanes where `predicate` holds, lane `n` as bit `n` (`__ballot_sync`).
#[inline(always)]
pub fn ballot(predicate: bool) -> u32 {
    imp::ballot(predicate)
}

#[cfg(target_arch = "nvptx64")]
mod imp {
    use super::{Mode, WarpValue};

    /// Every lane of the warp.
    const FULL: u32 = u32::MAX;

    // LLVM's NVVM intrinsics, which LLVM knows to be convergent (never moved into a branch some
    // lanes do not take), as it does not know of inline assembly.
    unsafe extern "C" {
        #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
        fn shfl_idx(mask: u32, value: u32, lane: u32, clamp: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
        fn shfl_down(mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
        fn shfl_up(mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
        fn shfl_bfly(mask: u32, value: u32, lane_mask: u32, clamp: u32) -> u32;
        #[link_name = "llvm.nvvm.vote.all.sync"]
        fn vote_all(mask: u32, predicate: bool) -> bool;
        #[link_name = "llvm.nvvm.vote.ballot.sync"]
        fn vote_ballot(mask: u32, predicate: bool) -> u32;
    }

    #[inline(always)]
    pub(super) fn lane_id() -> usize {
        let lane: u32;
        // SAFETY: reads a special register.
        unsafe {
            core::arch::asm!("mov.u32 {l}, %laneid;", l = out(reg32) lane, options(pure, nomem, nostack))
        };
        lane as usize
    }

    /// One 32-bit `shfl.sync` with the full mask. The clamp is 31 (the warp's last lane, one
    /// segment of 32) but for `up`, whose clamp is lane 0. The hardware reads `n`'s low five
    /// bits.
    #[inline(always)]
    fn shuffle32(mode: Mode, value: u32, n: u32) -> u32 {
        // SAFETY: a warp-wide register exchange; every lane of the warp executes it (the
        // caller's contract, as CUDA's).
        unsafe {
            match mode {
                Mode::Index => shfl_idx(FULL, value, n, 31),
                Mode::Down => shfl_down(FULL, value, n, 31),
                Mode::Up => shfl_up(FULL, value, n, 0),
                Mode::Xor => shfl_bfly(FULL, value, n, 31),
            }
        }
    }

    #[inline(always)]
    pub(super) fn shuffle<T: WarpValue>(mode: Mode, value: T, n: usize) -> T {
        let n = (n % super::WARP_SIZE) as u32;
        let bits = value.__to_bits();
        let low = shuffle32(mode, bits as u32, n) as u64;
        let high =
            if T::__WIDE { (shuffle32(mode, (bits >> 32) as u32, n) as u64) << 32 } else { 0 };
        T::__from_bits(high | low)
    }

    #[inline(always)]
    pub(super) fn all(predicate: bool) -> bool {
        // SAFETY: a warp-wide vote; every lane of the warp executes it (the caller's contract).
        unsafe { vote_all(FULL, predicate) }
    }

    #[inline(always)]
    pub(super) fn ballot(predicate: bool) -> u32 {
        // SAFETY: as in `all`.
        unsafe { vote_ballot(FULL, predicate) }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod imp {
    use std::cell::Cell;

    use super::{Mode, WARP_SIZE, WarpValue};
    use crate::gpu::imp::linear_thread;

    /// The words a lane puts in for one operation: a shuffle's value, or the most a warp-wide
    /// matrix operation moves (`gpu::mma`: four units of A and two of B).
    pub(crate) const PAYLOAD: usize = 6;

    /// What a lane put in: its words, and the operation's number + 1 (0: never put in).
    type Slot = ([u64; PAYLOAD], u64);

    /// One warp's exchange in the host-offload image: what each lane put in for its last
    /// operations, two of them, by the parity of the operation's number (a lane that has read
    /// operation `k` may already put in `k + 1` while another has yet to read `k`; none can
    /// put in `k + 2` before every lane has reached `k + 1`, and so read `k`).
    #[derive(Clone, Copy, Default)]
    pub(crate) struct Warp {
        /// The number of each lane's next operation.
        pub(crate) next: [u64; WARP_SIZE],
        /// What each lane put in, by parity and lane.
        slots: [[Slot; WARP_SIZE]; 2],
    }

    thread_local! {
        /// The warps of the block that runs on this system thread (null outside a kernel);
        /// `run_grid` sets them.
        static WARPS: Cell<(*mut Warp, usize)> = const { Cell::new((core::ptr::null_mut(), 0)) };
    }

    /// Sets the warps of the block that runs on this system thread (null: none), which must
    /// stay valid while they are set.
    pub(crate) fn set_warps(warps: *mut Warp, len: usize) {
        WARPS.with(|w| w.set((warps, len)));
    }

    /// The warps as they are set.
    pub(crate) fn warps() -> (*mut Warp, usize) {
        WARPS.with(Cell::get)
    }

    #[inline(always)]
    pub(super) fn lane_id() -> usize {
        linear_thread() % WARP_SIZE
    }

    /// Puts `words` in for the caller's next operation, waits for the other lanes of its warp
    /// that have not returned, and gives what `read` makes of the operation's slots.
    fn exchange<R>(
        words: [u64; PAYLOAD],
        read: impl FnOnce(&[Slot; WARP_SIZE], u64, usize) -> R,
    ) -> R {
        let (warps, len) = WARPS.with(Cell::get);
        let thread = linear_thread();
        if warps.is_null() || thread / WARP_SIZE >= len {
            // Only outside a kernel: every block of a launch has its warps set.
            panic!(
                "offload::gpu::warp operations were called outside a kernel (call them from an \
                 #[offload::kernel] function or what one calls)"
            );
        }
        let lane = thread % WARP_SIZE;
        // SAFETY: `run_grid` points `warps` at `len` warps of this block, which only the
        // threads of the block touch, and those run one at a time on this system thread; no
        // reference into them lives across the wait below.
        let op = unsafe {
            let warp = &mut *warps.add(thread / WARP_SIZE);
            let op = warp.next[lane];
            warp.next[lane] = op + 1;
            warp.slots[(op % 2) as usize][lane] = (words, op + 1);
            op
        };
        if crate::gpu::imp::wait(crate::gpu::imp::Wait::Warp).is_none() {
            unreachable!("a block's warps are set only while its threads can wait");
        }
        // The warps as set now: `run_grid` may have set them again, from a new borrow of the
        // same memory, while this thread waited (the pointer from before the wait would be one
        // that borrow has invalidated).
        let (warps, _) = WARPS.with(Cell::get);
        // SAFETY: as above; `run_grid` has not moved the warps while the block runs.
        let warp = unsafe { &*warps.add(thread / WARP_SIZE) };
        read(&warp.slots[(op % 2) as usize], op + 1, lane)
    }

    /// One word in the first place of a payload.
    fn word(bits: u64) -> [u64; PAYLOAD] {
        let mut words = [0; PAYLOAD];
        words[0] = bits;
        words
    }

    pub(super) fn shuffle<T: WarpValue>(mode: Mode, value: T, n: usize) -> T {
        exchange(word(value.__to_bits()), |slots, op, lane| {
            match mode.source(lane, n).map(|source| slots[source]) {
                Some((words, put)) if put == op => T::__from_bits(words[0]),
                // No such lane, or one that has returned: the caller's own value.
                _ => value,
            }
        })
    }

    pub(super) fn ballot(predicate: bool) -> u32 {
        exchange(word(predicate as u64), |slots, op, _| lanes(slots, |s| s == (word(1), op)))
    }

    /// Whether `predicate` holds in every lane that voted (those of the warp that have not
    /// returned).
    pub(super) fn all(predicate: bool) -> bool {
        exchange(word(predicate as u64), |slots, op, _| {
            lanes(slots, |s| s == (word(1), op)) == lanes(slots, |s| s.1 == op)
        })
    }

    /// Every lane's `words` for an operation the whole warp takes part in (a warp-wide matrix
    /// operation), by lane, and the caller's lane. Panics, naming `what`, if a lane of the
    /// warp has returned: on a GPU such an operation would not finish, or give anything.
    pub(crate) fn gather(
        words: [u64; PAYLOAD],
        what: &str,
    ) -> ([[u64; PAYLOAD]; WARP_SIZE], usize) {
        exchange(words, |slots, op, lane| {
            let missing = lanes(slots, |s| s.1 != op);
            assert!(
                missing == 0,
                "offload::gpu::mma::{what} ran without every lane of the warp (lanes {missing:#010x} \
                 had returned): each lane of a warp must reach each warp-wide matrix operation"
            );
            (slots.map(|s| s.0), lane)
        })
    }

    /// The lanes whose slot `keep` keeps, lane `n` as bit `n`.
    fn lanes(slots: &[Slot; WARP_SIZE], keep: impl Fn(Slot) -> bool) -> u32 {
        (0..WARP_SIZE).filter(|&l| keep(slots[l])).fold(0, |m, l| m | 1 << l)
    }
}
