//! `nvptx-sysroot`: finds or builds the nvptx64 sysroot and prints its path.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use nvptx_sysroot::{Config, DEFAULT_TARGET_CPU};

/// Prints a sysroot for `rustc --target nvptx64-nvidia-cuda --sysroot <it>`, building
/// core, alloc and compiler_builtins first if needed.
#[derive(Parser)]
#[command(name = "nvptx-sysroot")]
struct Args {
    /// Where built sysroots are kept [default: cargo offload's, <OFFLOAD_HOME>/nvptx-sysroot]
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// The GPU the crates are built for
    #[arg(long, default_value = DEFAULT_TARGET_CPU)]
    target_cpu: String,
    /// The nightly rustc to use [default: `rustup which rustc --toolchain nightly`]
    #[arg(long)]
    rustc: Option<PathBuf>,
    /// Print each command run
    #[arg(long)]
    verbose: bool,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(sysroot) => {
            println!("{}", sysroot.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("offload: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<PathBuf> {
    let cfg = Config {
        rustc: match args.rustc {
            Some(rustc) => rustc,
            None => nightly_rustc()?,
        },
        cache_dir: match args.cache_dir {
            Some(dir) => dir,
            None => offload_support::home::sysroot_dir()?,
        },
        target_cpu: args.target_cpu,
        verbose: args.verbose,
    };
    nvptx_sysroot::ensure(&cfg)
}

/// `rustup which rustc --toolchain nightly`.
fn nightly_rustc() -> Result<PathBuf> {
    let runner = offload_support::command::Runner::default();
    offload_support::toolchain::rustup_rustc(&runner, None, Some("nightly")).context(
        "no nightly rustc found (install it with `rustup toolchain install nightly`, or pass --rustc)",
    )
}
