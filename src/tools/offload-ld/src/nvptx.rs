//! `offload-ld nvptx`: the NVIDIA image's link, run by `cargo offload` on the bitcode rustc
//! wrote after its fat LTO of the kernels: the device stage of `offload_codegen`, then PTX.

use std::path::PathBuf;

use anyhow::{Context as _, Result, anyhow};
use clap::Parser;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;

/// The first argument that selects this mode (rustc never passes it to a linker).
pub(crate) const MODE: &str = offload_abi::nvptx::LD_MODE;

#[derive(Parser)]
#[command(name = "offload-ld nvptx", about = "The NVIDIA image's device stage: bitcode to PTX")]
struct Args {
    /// The kernels' module after rustc's fat LTO (bitcode).
    input: PathBuf,
    /// The PTX to write.
    #[arg(short, long)]
    output: PathBuf,
    /// The GPU (`sm_90`).
    #[arg(long)]
    cpu: String,
    /// An `#[offload::kernel]` entry point the image defines (repeatable).
    #[arg(long = "kernel", value_name = "NAME")]
    kernels: Vec<String>,
    /// Say what the device stage did.
    #[arg(short, long)]
    verbose: bool,
}

/// Runs the mode over its arguments (those after [`MODE`]).
pub(crate) fn run(args: &[String]) -> Result<()> {
    // clap answers --help itself, and exits 2 on arguments it refuses.
    let args =
        Args::parse_from(std::iter::once(format!("offload-ld {MODE}")).chain(args.iter().cloned()));
    let cx = Context::create();
    let buffer = MemoryBuffer::create_from_file(&args.input)
        .map_err(|e| anyhow!("reading {}: {e}", args.input.display()))?;
    let module = Module::parse_bitcode_from_buffer(&buffer, &cx)
        .map_err(|e| anyhow!("parsing bitcode {}: {e}", args.input.display()))?;
    let report = offload_codegen::nvptx::lower_device(&cx, &module, &args.kernels)?;
    if args.verbose {
        eprintln!(
            "offload-ld: nvptx: kernels {:?}; launch bounds {:?}; contracted {:?}; {} small \
             loops unrolled by 4",
            report.kernels, report.launch_bounds, report.contracted, report.unrolled
        );
    }
    let ptx = offload_codegen::nvptx::compile_ptx(&module, &args.cpu)?;
    std::fs::write(&args.output, ptx).with_context(|| format!("writing {}", args.output.display()))
}
