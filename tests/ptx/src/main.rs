//! The ptx suite's program: it only has to build. `x.py test ptx` builds its NVIDIA image and
//! FileChecks the PTX against each file of src/kernels (one scenario each).

mod kernels;

fn main() {}
