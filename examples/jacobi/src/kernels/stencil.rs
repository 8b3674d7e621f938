//! The five-point stencil, shared by the kernel (a submodule of the kernels file, built into
//! every device image with it).

/// The mean of the four neighbours of `cell` in a grid `w` cells wide.
#[inline(always)]
pub(crate) fn neighbours_mean(grid: &[f32], w: usize, cell: usize) -> f32 {
    0.25 * (grid[cell - w] + grid[cell + w] + grid[cell - 1] + grid[cell + 1])
}
