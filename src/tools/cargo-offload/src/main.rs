//! `cargo offload build|run|test`: from Rust source with kernels and preloads to a program that
//! runs through LLVM's offload runtime.
//!
//! ```text
//! device images (the kernels, per target) -> host program (cargo, linked by offload-ld:
//! lowering + embedding) -> run
//! ```
//!
//! Each is a function of stages.rs; this file holds the command line and dispatches.

mod cargo_files;
mod command;
mod config;
mod devices;
mod doctor;
mod flags;
mod fresh;
mod host;
mod image;
mod new;
mod nvptx;
mod project;
mod stages;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use crate::command::Runner;
use crate::config::{Config, offload_ld};
use crate::devices::Devices;
use crate::project::Features;
use crate::stages::Request;

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
    Test(TestArgs),
    /// Create a package that `cargo offload run` runs: a kernel, a program, a nightly toolchain.
    New {
        /// The package's folder (its name is the package's).
        path: PathBuf,
        /// The `offload` library to depend on (default: this tool's repository's).
        #[arg(long, value_name = "PATH")]
        offload: Option<PathBuf>,
    },
    /// Say what building and running offload programs needs here, and how to fix what is
    /// missing.
    Doctor {
        /// Folder holding libomptarget.so.19.1 and libomp.so.5.
        #[arg(long, default_value = offload_abi::runtime::DEFAULT_DIR)]
        runtime_dir: PathBuf,
    },
    /// Install CUDA 11.8's ptxas (PyPI nvidia-cuda-nvcc-cu11) into the tool's own folder
    /// (OFFLOAD_HOME, else ~/.cache/offload) ahead of the first build, which would do it.
    Setup {
        #[arg(short, long)]
        verbose: bool,
    },
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
    /// Keep the lowered IR of every unit and of the glue in target/offload/temps/<package>.
    #[arg(long)]
    save_temps: bool,
    /// Offload entry layout: llvm19 (Debian's libomptarget 19) or current (LLVM 20 and later).
    #[arg(long, default_value = "llvm19", value_parser = ["llvm19", "current"])]
    abi: String,
    /// Folder holding libomptarget.so.19.1 and libomp.so.5.
    #[arg(long, default_value = offload_abi::runtime::DEFAULT_DIR)]
    runtime_dir: PathBuf,
    /// Device images to embed.
    #[arg(long, value_enum, default_value = "auto")]
    devices: Devices,
    /// GPU architecture of the NVIDIA image: up to sm_90, or sm_90a (Hopper's wgmma).
    #[arg(long, default_value = nvptx::DEFAULT_TARGET_CPU)]
    target_cpu: String,
    /// The ptxas assembling the NVIDIA image (CUDA 11.8's); default: OFFLOAD_PTXAS, then the
    /// one `cargo offload setup` installed.
    #[arg(long)]
    ptxas: Option<PathBuf>,
    #[command(flatten)]
    features: Features,
    /// Accepted out of cargo's habit: the device images and the program are always built in
    /// the release profile.
    #[arg(long, hide = true)]
    release: bool,
    /// Where to build (as cargo's `--target-dir`; default: cargo's target directory).
    #[arg(long, value_name = "DIRECTORY")]
    target_dir: Option<PathBuf>,
    /// Build this example of the package too (may be repeated; `run` runs it).
    #[arg(long, value_name = "NAME")]
    example: Vec<String>,
    /// Build every example of the package too.
    #[arg(long)]
    examples: bool,
}

impl BuildArgs {
    /// The choices every stage shares.
    fn config(&self) -> Result<Config> {
        let runner = Runner { verbose: self.verbose, dry_run: self.dry_run, held: None };
        let target_dir = self.target_dir.as_deref();
        Config::new(runner, target_dir, &self.abi, &self.runtime_dir, self.save_temps)
    }

    /// What the stages build.
    fn request(&self) -> Request<'_> {
        Request {
            manifest_path: self.manifest_path.as_deref(),
            devices: self.devices,
            target_cpu: &self.target_cpu,
            ptxas: self.ptxas.as_deref(),
            features: &self.features,
            examples: &self.example,
            all_examples: self.examples,
        }
    }
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// The binary to run, where the package has several.
    #[arg(long, conflicts_with_all = ["example", "examples"])]
    bin: Option<String>,
    /// Run the program under COMMAND (its words split at spaces), as cargo's
    /// `target.<triple>.runner`: `--runner "mpirun -np 4"` starts four MPI ranks.
    #[arg(long, value_name = "COMMAND")]
    runner: Option<String>,
    /// Arguments for the program.
    #[arg(last = true)]
    args: Vec<String>,
}

impl RunArgs {
    /// The example to run, where one is asked for.
    fn example(&self) -> Result<Option<&str>> {
        match (self.build.example.as_slice(), self.build.examples) {
            ([], false) => Ok(None),
            ([one], false) => Ok(Some(one.as_str())),
            _ => anyhow::bail!("cargo offload run runs one program: pass one --example"),
        }
    }
}

#[derive(Args)]
struct TestArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// Test only the package's library.
    #[arg(long)]
    lib: bool,
    /// Test only this binary (may be repeated).
    #[arg(long, value_name = "NAME")]
    bin: Vec<String>,
    /// Test only this integration test (may be repeated).
    #[arg(long, value_name = "NAME")]
    test: Vec<String>,
    /// Run every test binary, even after one fails.
    #[arg(long)]
    no_fail_fast: bool,
    /// Arguments for the test binaries (a name filter, `--nocapture`, ...).
    #[arg(last = true)]
    args: Vec<String>,
}

impl TestArgs {
    /// cargo test's options for which tests to build and run.
    fn selection(&self) -> Vec<String> {
        let mut args = Vec::new();
        if self.lib {
            args.push("--lib".to_owned());
        }
        args.extend(self.bin.iter().map(|b| format!("--bin={b}")));
        args.extend(self.test.iter().map(|t| format!("--test={t}")));
        if self.no_fail_fast {
            args.push("--no-fail-fast".to_owned());
        }
        args
    }
}

fn main() -> ExitCode {
    if std::env::var_os(nvptx::AS_LINKER).is_some() {
        return nvptx::stand_in_linker(std::env::args_os().skip(1));
    }
    // As a cargo subcommand the second argument is "offload".
    let args = std::env::args_os()
        .enumerate()
        .filter(|(i, a)| !(*i == 1 && a == "offload"))
        .map(|(_, a)| a);
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
            let (config, request) = (args.config()?, args.request());
            let images = stages::device_images(&config, &request)?;
            stages::host_program(&config, &request, images)?;
            Ok(0)
        }
        Sub::Run(args) => {
            let (config, request) = (args.build.config()?, args.build.request());
            let example = args.example()?;
            let images = stages::device_images(&config, &request)?;
            let project = stages::host_program(&config, &request, images)?;
            let (bin, runner) = (args.bin.as_deref(), args.runner.as_deref());
            stages::run(&config, &project, example, bin, runner, &args.args)
        }
        Sub::Test(args) => {
            let (config, request) = (args.build.config()?, args.build.request());
            let images = stages::device_images(&config, &request)?;
            let tests = stages::link_tests(&config, &request, images, &args.selection())?;
            stages::run_tests(&config, tests, &args.args)?;
            Ok(0)
        }
        Sub::New { path, offload } => {
            let name = new::new_package(&path, offload.as_deref())?;
            eprintln!(
                "offload: created package `{name}` in {} (run it: cd {} && cargo offload run)",
                path.display(),
                path.display()
            );
            Ok(0)
        }
        Sub::Doctor { runtime_dir } => Ok(u8::from(!doctor::doctor(&runtime_dir, &offload_ld()?)?)),
        Sub::Setup { verbose } => {
            let ptxas = nvptx::install_ptxas(&Runner { verbose, ..Runner::default() })?;
            eprintln!("offload: ptxas at {}", ptxas.display());
            Ok(0)
        }
    }
}
