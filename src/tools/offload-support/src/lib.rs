//! What cargo-offload, offload-ld, offload-lower, compiletest and bootstrap share, written once:
//!
//! - [`command`]: running external programs, with their command line in errors;
//! - [`toolchain`]: what the Rust toolchain says of itself (`rustc --print sysroot`, `rustc -V`,
//!   `rustup which rustc`), and where FileCheck is;
//! - [`cubin`]: a cubin's ELF header, in the format libomptarget 19 loads, for the GPU asked for;
//! - [`ptx`]: the directives of a PTX module (its `.entry` kernels);
//! - [`symbols`]: the symbols a device image (an ELF file) defines;
//! - [`image_arg`]: `TRIPLE=PATH`, how a device image is named to the lowering;
//! - [`digest`]: stable digests of what the tools record on disk;
//! - [`home`]: the folder where the installed tool keeps ptxas and the nvptx sysroots.

pub mod command;
pub mod cubin;
pub mod digest;
pub mod home;
pub mod image_arg;
pub mod ptx;
pub mod symbols;
pub mod toolchain;
