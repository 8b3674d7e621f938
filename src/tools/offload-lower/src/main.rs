//! `offload-lower`: runs the offload lowering over one LLVM module (text or bitcode).
//!
//! Used by the codegen tests and by anyone reading what the lowering does to a program:
//! `offload-lower app.bc -o app.ll --image x86_64-unknown-linux-gnu=kernels.so`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use clap::Parser;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;
use offload_lower::LowerFlags;

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
    #[command(flatten)]
    lower: LowerFlags,
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
    // The paths as given: relative to the working folder.
    let config = args.lower.config(Path::new(""))?;
    if args.lower.split {
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

fn read_module<'ctx>(cx: &'ctx Context, path: &Path) -> Result<Module<'ctx>> {
    let buffer = MemoryBuffer::create_from_file(path)
        .map_err(|e| anyhow!("reading {}: {e}", path.display()))?;
    if buffer.as_slice().starts_with(b"BC\xC0\xDE") {
        Module::parse_bitcode_from_buffer(&buffer, cx)
            .map_err(|e| anyhow!("parsing bitcode {}: {e}", path.display()))
    } else {
        cx.create_module_from_ir(buffer).map_err(|e| anyhow!("parsing IR {}: {e}", path.display()))
    }
}
