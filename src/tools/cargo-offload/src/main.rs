//! `cargo offload build|run|test`: from Rust source with kernels and preloads to a program that
//! runs through LLVM's offload runtime.
//!
//! ```text
//! device images (the kernels, per target) -> host program (cargo, linked by offload-ld:
//! lowering + embedding) -> run
//! ```

mod command;
mod host;
mod image;
mod project;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Args, Parser, Subcommand};

use crate::command::{Cmd, Runner};
use crate::host::HostAction;
use crate::project::Project;

#[derive(Parser)]
#[command(name = "cargo-offload", bin_name = "cargo offload", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Subcommand)]
enum Sub {
    /// Build the device images and the host program.
    Build(BuildArgs),
    /// Build, then run a binary of the package.
    Run(RunArgs),
    /// Build and run the package's tests through the offload pipeline.
    Test(BuildArgs),
}

#[derive(Args, Clone)]
struct BuildArgs {
    /// The package's Cargo.toml.
    #[arg(long)]
    manifest_path: Option<PathBuf>,
    /// Print every command run.
    #[arg(short, long)]
    verbose: bool,
    /// Print the commands instead of running them.
    #[arg(long)]
    dry_run: bool,
    /// Keep the linked bitcode and the lowered IR in target/offload/temps/<package>.
    #[arg(long)]
    save_temps: bool,
    /// Offload entry layout: llvm19 (Debian's libomptarget 19) or current (LLVM 20 and later).
    #[arg(long, default_value = "llvm19", value_parser = ["llvm19", "current"])]
    abi: String,
    /// Folder holding libomptarget.so.19.1 and libomp.so.5.
    #[arg(long, default_value = "/usr/lib/llvm-19/lib")]
    runtime_dir: PathBuf,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// The binary to run, where the package has several.
    #[arg(long)]
    bin: Option<String>,
    /// Arguments for the program.
    #[arg(last = true)]
    args: Vec<String>,
}

/// Choices shared by every stage.
pub(crate) struct Config {
    pub(crate) runner: Runner,
    pub(crate) cargo: String,
    pub(crate) offload_ld: PathBuf,
    pub(crate) abi: String,
    pub(crate) runtime_dir: PathBuf,
    pub(crate) save_temps: bool,
}

impl Config {
    fn new(args: &BuildArgs) -> Result<Self> {
        let offload_ld = match std::env::var_os("OFFLOAD_LD") {
            Some(p) => PathBuf::from(p),
            None => std::env::current_exe().context("locating cargo-offload")?.with_file_name("offload-ld"),
        };
        Ok(Config {
            runner: Runner { verbose: args.verbose, dry_run: args.dry_run },
            cargo: std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()),
            offload_ld,
            abi: args.abi.clone(),
            runtime_dir: args.runtime_dir.clone(),
            save_temps: args.save_temps,
        })
    }

    /// Flags passed to every cargo invocation.
    pub(crate) fn cargo_flags(&self) -> Vec<&'static str> {
        if self.runner.verbose { vec![] } else { vec!["--quiet"] }
    }

    /// A progress line on stderr (not in dry runs, whose stdout is the plan).
    pub(crate) fn status(&self, what: &str) {
        if !self.runner.dry_run {
            eprintln!("offload: {what}");
        }
    }
}

fn main() -> ExitCode {
    // As a cargo subcommand the second argument is "offload".
    let args = std::env::args_os().enumerate().filter(|(i, a)| !(*i == 1 && a == "offload")).map(|(_, a)| a);
    match run(Cli::parse_from(args)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("offload: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Sub::Build(args) => {
            let (project, config) = load(&args)?;
            build(&project, &config, HostAction::Build)?;
            Ok(0)
        }
        Sub::Test(args) => {
            let (project, config) = load(&args)?;
            build(&project, &config, HostAction::Test)?;
            Ok(0)
        }
        Sub::Run(args) => {
            let (project, config) = load(&args.build)?;
            build(&project, &config, HostAction::Build)?;
            let bin = host::binary(&project, args.bin.as_deref())?;
            config.status(&format!("running {}", bin.display()));
            let code = config.runner.run_program(&Cmd::new(bin).args(&args.args))?;
            Ok(u8::try_from(code).unwrap_or(1))
        }
    }
}

fn load(args: &BuildArgs) -> Result<(Project, Config)> {
    let project = Project::load(args.manifest_path.as_deref())?;
    Ok((project, Config::new(args)?))
}

/// Device images, then the host program linked with them (or its tests run with them).
fn build(project: &Project, config: &Config, action: HostAction) -> Result<()> {
    let images = vec![image::build_host_image(project, config)?];
    let cmd = host::host_command(project, &images, config, action)?;
    config.status(&format!("building the host program of {}", project.name));
    config.runner.run("the host program build", &cmd)
}
