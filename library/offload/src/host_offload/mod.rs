//! The host-offload image's GPU: the runtime's host plugin calls a kernel once for the whole
//! grid, and [`run_grid`] runs its body for every (block, thread), as CUDA numbers them.
//!
//! - `grid`: the blocks of a grid over the machine's cores (`OFFLOAD_HOST_THREADS`);
//! - `block`: one block's threads, one after another until one waits for the others
//!   (`sync_threads`, a warp operation), then at once, each a coroutine;
//! - `stack`: the coroutines' stacks (`OFFLOAD_HOST_STACK`), kept between launches, and the
//!   report of a kernel thread's stack overflow.
//!
//! The thread-local state a kernel's `offload::gpu` calls read (indices, shared memory, warps,
//! the running coroutine) lives beside those functions, in `gpu`.

mod block;
mod grid;
mod stack;
#[cfg(test)]
mod tests;

pub use grid::run_grid;
