//! Thread and block indices inside a kernel.
//!
//! Launches are one-dimensional (the runtime launches `grid` blocks of `block` threads along x).
//! On nvptx these read the hardware registers. In the x86_64 host-offload image the runtime calls
//! a kernel once, and the kernel's entry point runs every (block, thread) pair in turn, setting
//! the indices these functions return.

pub mod atomic;
pub mod math;

#[cfg(target_arch = "nvptx64")]
mod imp {
    use core::arch::nvptx;

    #[inline(always)]
    pub(super) fn thread_idx_x() -> usize {
        unsafe { nvptx::_thread_idx_x() as usize }
    }
    #[inline(always)]
    pub(super) fn block_idx_x() -> usize {
        unsafe { nvptx::_block_idx_x() as usize }
    }
    #[inline(always)]
    pub(super) fn block_dim_x() -> usize {
        unsafe { nvptx::_block_dim_x() as usize }
    }
    #[inline(always)]
    pub(super) fn grid_dim_x() -> usize {
        unsafe { nvptx::_grid_dim_x() as usize }
    }
    #[inline(always)]
    pub(super) fn sync_threads() {
        unsafe { nvptx::_syncthreads() }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod imp {
    use std::cell::Cell;

    thread_local! {
        /// (thread index, block index, block size, grid size) of the emulated thread.
        static INDEX: Cell<[usize; 4]> = const { Cell::new([0, 0, 1, 1]) };
    }

    pub(crate) fn set(index: [usize; 4]) {
        INDEX.with(|i| i.set(index));
    }

    #[inline(always)]
    fn get(k: usize) -> usize {
        INDEX.with(|i| i.get()[k])
    }
    pub(super) fn thread_idx_x() -> usize {
        get(0)
    }
    pub(super) fn block_idx_x() -> usize {
        get(1)
    }
    pub(super) fn block_dim_x() -> usize {
        get(2)
    }
    pub(super) fn grid_dim_x() -> usize {
        get(3)
    }
    pub(super) fn sync_threads() {
        // The host-offload image runs the threads of a block one after another, so a barrier
        // between them cannot be honoured: refuse rather than compute a wrong answer.
        panic!(
            "offload::gpu::sync_threads is not supported by the host-offload image (threads of a \
             block run one after another)"
        );
    }
}

/// Index of the calling thread within its block.
#[inline(always)]
pub fn thread_idx_x() -> usize {
    imp::thread_idx_x()
}

/// Index of the calling thread's block within the grid.
#[inline(always)]
pub fn block_idx_x() -> usize {
    imp::block_idx_x()
}

/// Threads per block.
#[inline(always)]
pub fn block_dim_x() -> usize {
    imp::block_dim_x()
}

/// Blocks in the grid.
#[inline(always)]
pub fn grid_dim_x() -> usize {
    imp::grid_dim_x()
}

/// Global index of the calling thread: `block_idx_x() * block_dim_x() + thread_idx_x()`.
#[inline(always)]
pub fn global_id_x() -> usize {
    block_idx_x() * block_dim_x() + thread_idx_x()
}

/// Threads in the whole grid: `grid_dim_x() * block_dim_x()` (the stride of a grid-stride loop).
#[inline(always)]
pub fn global_size_x() -> usize {
    grid_dim_x() * block_dim_x()
}

/// Barrier for the threads of one block (`bar.sync 0`). Not supported by the host-offload image.
#[inline(always)]
pub fn sync_threads() {
    imp::sync_threads()
}
