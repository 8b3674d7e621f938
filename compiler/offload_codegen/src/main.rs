//! `offload-lower`: runs the offload lowering over one LLVM module (text or bitcode).
//!
//! Used by the codegen tests and by anyone reading what the lowering does to a program:
//! `offload-lower app.bc -o app.ll --image x86_64-unknown-linux-gnu=kernels.so`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow};
use clap::Parser;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use offload_codegen::{Config, Image, RuntimeAbi};

#[derive(Parser)]
#[command(
    name = "offload-lower",
    about = "Lower offload intrinsics into OpenMP offload runtime calls"
)]
struct Args {
    /// Input module: LLVM IR text (`.ll`) or bitcode.
    input: PathBuf,
    /// Output path.
    #[arg(short, long)]
    output: PathBuf,
    /// What to write.
    #[arg(long, value_enum, default_value = "llvm-ir")]
    emit: Emit,
    /// Offload entry layout of the runtime.
    #[arg(long, value_enum, default_value = "llvm19")]
    abi: RuntimeAbi,
    /// A device image to embed, as TRIPLE=PATH (repeatable).
    #[arg(long = "image", value_name = "TRIPLE=PATH")]
    images: Vec<String>,
    /// The PTX the NVIDIA image was assembled from, embedded for the library's own CUDA
    /// module (the driver compiles it).
    #[arg(long, value_name = "PATH")]
    cuda_ptx: Option<PathBuf>,
    /// Lower the module as one unit of a program, then append the program's glue made from
    /// it (as `offload-ld` does with each codegen unit).
    #[arg(long)]
    split: bool,
    /// Optimisation level of the object code (with --emit obj).
    #[arg(long, default_value_t = 2)]
    opt_level: u8,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Emit {
    LlvmIr,
    LlvmBc,
    Obj,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("offload: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<()> {
    let cx = Context::create();
    let module = read_module(&cx, &args.input)?;
    let images = args.images.iter().map(|s| parse_image(s)).collect::<Result<Vec<_>>>()?;
    let cuda_ptx = args
        .cuda_ptx
        .as_ref()
        .map(|p| std::fs::read(p).with_context(|| format!("reading PTX {}", p.display())))
        .transpose()?;
    let config = Config { abi: args.abi, images, cuda_ptx };
    if args.split {
        offload_codegen::lower_split(&cx, &module, &config)?;
    } else {
        offload_codegen::lower(&cx, &module, &config)?;
    }
    match args.emit {
        Emit::LlvmIr => module
            .print_to_file(&args.output)
            .map_err(|e| anyhow!("writing {}: {e}", args.output.display())),
        Emit::LlvmBc => {
            if module.write_bitcode_to_path(&args.output) {
                Ok(())
            } else {
                Err(anyhow!("writing {}", args.output.display()))
            }
        }
        Emit::Obj => offload_codegen::write_object(&module, args.opt_level, &args.output),
    }
}

fn read_module<'ctx>(cx: &'ctx Context, path: &std::path::Path) -> Result<Module<'ctx>> {
    let buffer = MemoryBuffer::create_from_file(path)
        .map_err(|e| anyhow!("reading {}: {e}", path.display()))?;
    if buffer.as_slice().starts_with(b"BC\xC0\xDE") {
        Module::parse_bitcode_from_buffer(&buffer, cx)
            .map_err(|e| anyhow!("parsing bitcode {}: {e}", path.display()))
    } else {
        cx.create_module_from_ir(buffer).map_err(|e| anyhow!("parsing IR {}: {e}", path.display()))
    }
}

fn parse_image(spec: &str) -> Result<Image> {
    let (triple, path) =
        spec.split_once('=').ok_or_else(|| anyhow!("--image takes TRIPLE=PATH, got `{spec}`"))?;
    let bytes = std::fs::read(path).with_context(|| format!("reading image {path}"))?;
    Ok(Image { triple: triple.to_owned(), bytes })
}
