//! `core::arch::nvptx`'s thread indices and barrier under upstream's names, on every device
//! image: a kernel written with them (`use core::arch::nvptx::*` becomes
//! `use offload::arch::nvptx::*`) also runs on the host-offload image. They are
//! [`offload::gpu`](crate::gpu)'s, and `unsafe` as upstream's are.

/// The nvptx intrinsics' names.
pub mod nvptx {
    macro_rules! index {
        ($($name:ident => $gpu:ident),* $(,)?) => {$(
            #[doc = concat!("[`gpu::", stringify!($gpu), "`](crate::gpu::", stringify!($gpu), "), as an `i32`.")]
            ///
            /// # Safety
            /// None here (upstream's are `unsafe`).
            #[inline(always)]
            pub unsafe fn $name() -> i32 {
                crate::gpu::$gpu() as i32
            }
        )*};
    }

    index! {
        _thread_idx_x => thread_idx_x, _thread_idx_y => thread_idx_y, _thread_idx_z => thread_idx_z,
        _block_idx_x => block_idx_x, _block_idx_y => block_idx_y, _block_idx_z => block_idx_z,
        _block_dim_x => block_dim_x, _block_dim_y => block_dim_y, _block_dim_z => block_dim_z,
        _grid_dim_x => grid_dim_x, _grid_dim_y => grid_dim_y, _grid_dim_z => grid_dim_z,
    }

    /// [`gpu::sync_threads`](crate::gpu::sync_threads).
    ///
    /// # Safety
    /// None here (upstream's is `unsafe`).
    #[inline(always)]
    pub unsafe fn _syncthreads() {
        crate::gpu::sync_threads()
    }
}
