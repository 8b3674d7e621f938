//! The Jacobi kernel: one relaxation step of the 2D heat equation on a `width x height` grid
//! whose border cells hold fixed temperatures.

mod stencil;

/// `dst[c] = (up + down + left + right) / 4` for every interior cell `c` of `src`; border
/// cells are copied. Launched as a 2D grid: x along a row, y down the columns.
#[offload::kernel]
pub fn jacobi_step(width: u32, height: u32, src: &[f32], dst: &mut [f32]) {
    let (w, h) = (width as usize, height as usize);
    let (x, y) = (offload::gpu::global_id_x(), offload::gpu::global_id_y());
    if x >= w || y >= h {
        return;
    }
    let cell = y * w + x;
    dst[cell] = if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
        src[cell]
    } else {
        stencil::neighbours_mean(src, w, cell)
    };
}
