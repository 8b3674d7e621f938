//! Thread and block indices inside a kernel.
//!
//! A launch is a grid of blocks of threads, each along x, y and z (`launch!(k, [gx, gy, 1],
//! [16, 16, 1], ...)`; a number is `[n, 1, 1]`). On nvptx these read the hardware registers.
//! In the x86_64 host-offload image the runtime calls a kernel once, and the kernel's entry
//! point runs every (block, thread) pair in turn, x fastest, setting the indices these functions
//! return.

pub mod async_copy;
pub mod atomic;
mod block_shared;
pub mod math;
mod matrix;
#[cfg(target_arch = "nvptx64")]
#[doc(hidden)]
pub mod mem;
pub mod mma;
mod shared_matrix;
mod vector;
pub mod warp;
pub mod wgmma;

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use block_shared::imp as shared_imp;
pub use block_shared::{Shared, shared, shared_array};
pub use matrix::{Column, Matrix, MatrixMut};
pub use shared_matrix::SharedMatrix;
pub use vector::read_array;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use warp::imp as warp_imp;

#[cfg(target_arch = "nvptx64")]
mod imp {
    use core::arch::nvptx;

    /// The registers of one axis: thread index, block index, block size, grid size.
    macro_rules! axis {
        ($thread:ident, $block:ident, $bdim:ident, $gdim:ident) => {
            #[inline(always)]
            pub(super) fn $thread() -> usize {
                unsafe { nvptx::$thread() as usize }
            }
            #[inline(always)]
            pub(super) fn $block() -> usize {
                unsafe { nvptx::$block() as usize }
            }
            #[inline(always)]
            pub(super) fn $bdim() -> usize {
                unsafe { nvptx::$bdim() as usize }
            }
            #[inline(always)]
            pub(super) fn $gdim() -> usize {
                unsafe { nvptx::$gdim() as usize }
            }
        };
    }
    axis!(_thread_idx_x, _block_idx_x, _block_dim_x, _grid_dim_x);
    axis!(_thread_idx_y, _block_idx_y, _block_dim_y, _grid_dim_y);
    axis!(_thread_idx_z, _block_idx_z, _block_dim_z, _grid_dim_z);

    #[inline(always)]
    pub(super) fn sync_threads() {
        unsafe { nvptx::_syncthreads() }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub(crate) mod imp {
    use std::cell::Cell;

    /// The indices of an emulated thread: its index in the block, its block's in the grid, the
    /// block's size and the grid's, each along x, y and z.
    pub(crate) type Index = [[usize; 3]; 4];

    /// Outside a kernel: the one thread of a one-block grid.
    pub(crate) const OUTSIDE: Index = [[0; 3], [0; 3], [1; 3], [1; 3]];

    thread_local! {
        static INDEX: Cell<Index> = const { Cell::new(OUTSIDE) };
    }

    pub(crate) fn set(index: Index) {
        INDEX.with(|i| i.set(index));
    }

    /// The emulated thread's indices as they are set.
    pub(crate) fn index() -> Index {
        INDEX.with(Cell::get)
    }

    /// Sets the emulated thread's index in its block alone (the block's stay).
    #[inline(always)]
    pub(crate) fn set_thread(thread: [usize; 3]) {
        // SAFETY: the cell is this thread's, and no reference into it is alive.
        INDEX.with(|i| unsafe { (*i.as_ptr())[0] = thread });
    }

    /// The emulated thread's index in its block, x fastest (as warps are made of them).
    #[inline(always)]
    pub(crate) fn linear_thread() -> usize {
        get(0, 0) + get(2, 0) * (get(0, 1) + get(2, 1) * get(0, 2))
    }

    #[inline(always)]
    fn get(what: usize, axis: usize) -> usize {
        // One word read, not the whole index copied out (this runs for every index a kernel
        // asks for). SAFETY: as in `set_thread`.
        INDEX.with(|i| unsafe { (*i.as_ptr())[what][axis] })
    }

    /// The four indices of one axis, as the nvptx side names them.
    macro_rules! axis {
        ($axis:literal, $thread:ident, $block:ident, $bdim:ident, $gdim:ident) => {
            // Inlined into the kernels' crates: each is a thread-local read in a loop of the
            // grid's threads.
            #[inline(always)]
            pub(super) fn $thread() -> usize {
                get(0, $axis)
            }
            #[inline(always)]
            pub(super) fn $block() -> usize {
                get(1, $axis)
            }
            #[inline(always)]
            pub(super) fn $bdim() -> usize {
                get(2, $axis)
            }
            #[inline(always)]
            pub(super) fn $gdim() -> usize {
                get(3, $axis)
            }
        };
    }
    axis!(0, _thread_idx_x, _block_idx_x, _block_dim_x, _grid_dim_x);
    axis!(1, _thread_idx_y, _block_idx_y, _block_dim_y, _grid_dim_y);
    axis!(2, _thread_idx_z, _block_idx_z, _block_dim_z, _grid_dim_z);

    /// Where an emulated thread of a block whose threads run at once waits for the others.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Wait {
        /// `sync_threads`: for every thread of the block that has not returned.
        Block,
        /// A warp operation: for every thread of its warp that has not returned.
        Warp,
    }

    /// The suspension point of the emulated thread running now, where its block's threads run
    /// at once (each a coroutine on the system thread that runs the block, see `run_grid`).
    pub(crate) type Yielder = corosensei::Yielder<(), Wait>;

    thread_local! {
        /// The running emulated thread's [`Yielder`]; null outside a kernel.
        static YIELDER: Cell<*const Yielder> = const { Cell::new(core::ptr::null()) };
    }

    /// Sets the running emulated thread's suspension point (null: none), which must stay valid
    /// while it is set: `run_grid` sets it as a thread starts and clears it once the thread is
    /// suspended or has ended.
    pub(crate) fn set_yielder(yielder: *const Yielder) {
        YIELDER.with(|y| y.set(yielder));
    }

    /// The running emulated thread's suspension point as it is set.
    pub(crate) fn yielder() -> *const Yielder {
        YIELDER.with(Cell::get)
    }

    /// Suspends the running emulated thread until `run_grid` resumes it: when every thread it
    /// waits for (`wait`) waits too or has returned. `None` outside a kernel.
    pub(crate) fn wait(wait: Wait) -> Option<()> {
        let yielder = YIELDER.with(Cell::get);
        if yielder.is_null() {
            return None;
        }
        // SAFETY: set by `run_grid` to this thread's yielder, which lives on its stack.
        unsafe { &*yielder }.suspend(wait);
        // The threads that ran meanwhile set their own: this one is running again.
        set_yielder(yielder);
        Some(())
    }

    /// The barrier: as PTX's `bar.sync`, it waits for the threads that have not exited.
    pub(super) fn sync_threads() {
        if wait(Wait::Block).is_none() {
            // Only outside a kernel: every block of a launch runs where its threads can wait.
            panic!(
                "offload::gpu::sync_threads was called outside a kernel (call it from an \
                 #[offload::kernel] function or what one calls)"
            );
        }
    }
}

/// The public functions of one axis.
macro_rules! axis {
    ($x:literal, $thread:ident, $block:ident, $bdim:ident, $gdim:ident, $global:ident, $size:ident,
     $imp_thread:ident, $imp_block:ident, $imp_bdim:ident, $imp_gdim:ident) => {
        #[doc = concat!("Index of the calling thread within its block, along ", $x, ".")]
        #[inline(always)]
        pub fn $thread() -> usize {
            imp::$imp_thread()
        }

        #[doc = concat!("Index of the calling thread's block within the grid, along ", $x, ".")]
        #[inline(always)]
        pub fn $block() -> usize {
            imp::$imp_block()
        }

        #[doc = concat!("Threads per block along ", $x, ".")]
        #[inline(always)]
        pub fn $bdim() -> usize {
            imp::$imp_bdim()
        }

        #[doc = concat!("Blocks in the grid along ", $x, ".")]
        #[inline(always)]
        pub fn $gdim() -> usize {
            imp::$imp_gdim()
        }

        #[doc = concat!(
            "Global index of the calling thread along ", $x, ": `", stringify!($block), "() * ",
            stringify!($bdim), "() + ", stringify!($thread), "()`."
        )]
        #[inline(always)]
        pub fn $global() -> usize {
            $block() * $bdim() + $thread()
        }

        #[doc = concat!(
            "Threads in the whole grid along ", $x, ": `", stringify!($gdim), "() * ",
            stringify!($bdim), "()` (the stride of a grid-stride loop)."
        )]
        #[inline(always)]
        pub fn $size() -> usize {
            $gdim() * $bdim()
        }
    };
}

axis!(
    "x",
    thread_idx_x,
    block_idx_x,
    block_dim_x,
    grid_dim_x,
    global_id_x,
    global_size_x,
    _thread_idx_x,
    _block_idx_x,
    _block_dim_x,
    _grid_dim_x
);
axis!(
    "y",
    thread_idx_y,
    block_idx_y,
    block_dim_y,
    grid_dim_y,
    global_id_y,
    global_size_y,
    _thread_idx_y,
    _block_idx_y,
    _block_dim_y,
    _grid_dim_y
);
axis!(
    "z",
    thread_idx_z,
    block_idx_z,
    block_dim_z,
    grid_dim_z,
    global_id_z,
    global_size_z,
    _thread_idx_z,
    _block_idx_z,
    _block_dim_z,
    _grid_dim_z
);

/// The calling block's `(y, x)` in the grid, with the blocks taken in launch order (x fastest)
/// and laid down groups of `rows` rows of the grid, column by column, instead of along whole
/// rows: the blocks that run at once then cover a near-square patch of the grid. In a tiled
/// matrix product (a block a tile of `c`) they share rows of `a` and columns of `b`, which stay
/// in L2: a DGEMM of 64 x 64 tiles at 4096^3 ran 9% faster with `rows` 16 than in launch order
/// (docs/PERFORMANCE.md). Each block of the grid gets a distinct `(y, x)`; `rows` 0 or 1 is a
/// column at a time.
#[inline(always)]
pub fn block_idx_grouped(rows: usize) -> (usize, usize) {
    // Hardware indices are 32-bit; so is the arithmetic (64-bit arithmetic here made a DGEMM's
    // address arithmetic 64-bit too: 162 registers a thread against 128). A grid of more than
    // 2^32 blocks keeps the launch order.
    let (y, x) = (block_idx_y() as u32, block_idx_x() as u32);
    let (height, width) = (grid_dim_y() as u32, grid_dim_x() as u32);
    let (y, x) = if u64::from(height) * u64::from(width) <= u64::from(u32::MAX) {
        grouped_yx((y, x), (height, width), u32::try_from(rows).unwrap_or(u32::MAX))
    } else {
        (y, x)
    };
    (y as usize, x as usize)
}

/// [`block_idx_grouped`]'s order: block `(y, x)` of a `height x width` grid of at most 2^32
/// blocks, taken `rows` rows a group (at least 1, at most `height`).
#[inline(always)]
fn grouped_yx((y, x): (u32, u32), (height, width): (u32, u32), rows: u32) -> (u32, u32) {
    // Divisors of at least 1, so that no division is checked for zero.
    let rows = rows.min(height).max(1);
    let (id, group) = (y * width + x, (rows * width).max(1));
    let first = id / group * rows;
    let here = (height - first).clamp(1, rows);
    (first + id % group % here, id % group / here)
}

/// Barrier for the threads of one block (`bar.sync 0`): it waits for the block's threads that
/// have not exited. In the host-offload image the first thread of a block that reaches it makes
/// the block's threads run at once from there. Outside a kernel it panics, saying so.
#[inline(always)]
pub fn sync_threads() {
    imp::sync_threads()
}

#[cfg(test)]
mod tests {
    use super::grouped_yx;

    /// Every block of a grid gets a distinct place, groups of `rows` rows run column by
    /// column, and a last group of fewer rows is whole.
    #[test]
    fn grouped_order_is_a_permutation() {
        for (height, width) in [(1, 1), (1, 7), (7, 1), (8, 8), (13, 5), (64, 64), (100, 3)] {
            for rows in [0, 1, 2, 3, 8, 16, 200] {
                let mut seen = vec![false; (height * width) as usize];
                let mut order = Vec::new();
                for y in 0..height {
                    for x in 0..width {
                        let (gy, gx) = grouped_yx((y, x), (height, width), rows);
                        assert!(gy < height && gx < width, "{height}x{width} by {rows}");
                        let at = (gy * width + gx) as usize;
                        assert!(!seen[at], "{height}x{width} by {rows}: ({gy}, {gx}) twice");
                        seen[at] = true;
                        order.push((gy, gx));
                    }
                }
                // Within a group, consecutive blocks go down a column first.
                let rows = rows.clamp(1, height);
                if height % rows == 0 && rows > 1 {
                    assert_eq!(order[1], (1, 0), "{height}x{width} by {rows}");
                    let next = if width > 1 { (0, 1) } else { (rows % height, 0) };
                    assert_eq!(order[rows as usize % order.len()], next, "{height}x{width}");
                }
            }
        }
    }
}
