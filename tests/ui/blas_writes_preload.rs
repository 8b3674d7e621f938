//! A BLAS routine cannot write into a `Preload`, read-only on the device: its output must be a
//! `PreloadMut` (or a mutable range of one), as a kernel's `&mut` argument must.
//@ normalize-stderr-test: "(library/offload[a-z-]*/src/[a-z_]+\.rs):[0-9]+:[0-9]+" -> "$1:LL:COL"

use offload::preload;
use offload_blas::{Matrix, MatrixMut, axpy, gemm};

fn main() -> Result<(), offload::Error> {
    let (xs, ys) = ([1.0f32; 16], [0.0f32; 16]);
    let (x, mut y) = (preload(&xs[..]), preload(&ys[..]));
    axpy(2.0, &x, &mut y)?; //~ ERROR `Preload<'_, [f32]>` cannot be written on the device
    let a = Matrix::new(&x, 4, 4);
    gemm(1.0, a, a, 0.0, MatrixMut::new(&mut y, 4, 4))?; //~ ERROR `Preload<'_, [f32]>` cannot be written on the device
    Ok(())
}
