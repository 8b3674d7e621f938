//! The build entry behind `x.py`: `setup | build | test [SUITE...] | run EXAMPLE [ARGS...] |
//! install | bundle | bench [saxpy|workloads|build]`, on clap (`./x.py help`).

mod anchor_clang;
mod bench;
mod bundle;
mod config;
mod docs_suite;
mod install;
mod install_suite;
mod programs;
mod sanitize;
mod setup;
mod shell;
mod test;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::programs::Flavor;

/// `./x.py COMMAND`: the project's build entry (`./x.py help`, `./x.py COMMAND --help`).
#[derive(Parser, Debug)]
#[command(
    name = "./x.py",
    bin_name = "./x.py",
    about = "Build, test, run and measure the offload project"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Install what the build needs (Debian packages as root, rust-src, ptxas into cargo offload's folder) and
    /// build the tools (cargo-offload, offload-ld, offload-lower, compiletest).
    Setup,
    /// The same as setup.
    Build,
    /// Run test suites (default: unit, codegen, ptx, ui, docs, run, tsan, install), or `gpu` (the run
    /// suite on an NVIDIA GPU, NVIDIA image only; on a machine without cargo, over the programs
    /// built here before). A test file of the codegen, ui or ptx suite
    /// (tests/codegen/NAME.rs) runs that test alone.
    Test {
        /// Suites, or test files.
        suites: Vec<String>,
        /// Rewrite the ui tests' `.stderr` files from the compiler's output.
        #[arg(long)]
        bless: bool,
        /// Run the gpu suite's programs under compute-sanitizer's tools too (all three, or
        /// those named: --sanitize=racecheck,initcheck); any report fails.
        #[arg(long, value_enum, value_name = "TOOLS", num_args = 0.., require_equals = true, value_delimiter = ',')]
        sanitize: Option<Vec<sanitize::Tool>>,
    },
    /// Build an example of examples/ through the offload pipeline and run it.
    Run {
        /// The example (saxpy, jacobi, reduce).
        example: String,
        /// Its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Put cargo-offload and offload-ld on PATH, for packages anywhere (cargo offload new NAME).
    Install {
        /// Install into DIR/bin (default: cargo's, ~/.cargo/bin).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Build the tools in the debug profile (faster to build).
        #[arg(long)]
        debug: bool,
    },
    /// Make build/gpu-bundle: the programs, the runtime's .debs and a script, for a GPU machine
    /// without Rust (./run-on-gpu.sh test gpu there).
    Bundle,
    /// Measure: saxpy beside CUDA by hand and clang OpenMP, or the kernel workloads beside CUDA
    /// by hand, CUB and cuBLAS (on an NVIDIA GPU: bundled here, measured where there is one, with
    /// ./run-on-gpu.sh bench there); or the build time of examples/saxpy, here.
    Bench {
        /// What to measure.
        #[arg(value_enum, default_value = "saxpy")]
        bench: bench::Bench,
        /// Runs of each program.
        #[arg(long, default_value_t = bench::DEFAULT_REPS, value_parser = clap::value_parser!(u64).range(1..))]
        reps: u64,
        /// Where the report goes (default: build/bench, build/bench-workloads, build/bench-build).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// The problem sizes of `bench saxpy`, f32 per array (K = 2^10, M = 2^20): e.g. 4096,64K,16M
        /// [default: 64M,4096]
        #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = bench::parse_size)]
        sizes: Vec<u64>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("offload: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<()> {
    let root = repo_root()?;
    let config = Config::load(&root)?;
    match command {
        Command::Setup | Command::Build => prepare(&root, &config).map(drop),
        Command::Test { suites, bless, sanitize } if !tools::have_cargo() => {
            if bless {
                bail!("--bless rewrites ui tests, which need cargo");
            }
            test::test_prebuilt(&root, &suites, &sanitize::chosen(sanitize))
        }
        Command::Test { suites, bless, sanitize } => {
            let tools = prepare(&root, &config)?;
            let sanitize = sanitize::chosen(sanitize);
            test::test(
                &root,
                &config,
                &tools,
                &suites,
                test::Options { bless, sanitize: &sanitize },
            )
        }
        Command::Bench { bench, reps, out, sizes } => {
            let options = bench::Options { bench, reps: reps as usize, out, sizes };
            bench::bench(&root, &config, &options, prepare)
        }
        Command::Bundle => {
            let tools = prepare(&root, &config)?;
            bundle::bundle(&root, &config, &tools, |out| {
                bench::add_to_bundle(&root, &config, &tools, out)
            })
        }
        Command::Install { root: into, debug } => {
            prepare(&root, &config)?;
            install::install(&root, &install::Options { root: into, debug }).map(drop)
        }
        Command::Run { example, args } => {
            let dir = root.join("examples").join(&example);
            if !dir.join("Cargo.toml").is_file() {
                bail!("no example `{example}` in examples/ (try saxpy or jacobi)");
            }
            // A machine without cargo runs the program built before (a GPU machine).
            if tools::have_cargo() {
                let tools = prepare(&root, &config)?;
                programs::build(&root, &tools, &config, &dir, Flavor::Portable)?;
            }
            let bin = Flavor::Portable.bin_dir(&root).join(&example);
            shell::runner().run(&example, std::process::Command::new(&bin).args(&args))
        }
    }
}

/// Everything the other commands need: packages, the tools, ptxas.
fn prepare(root: &std::path::Path, config: &Config) -> Result<tools::Tools> {
    setup::setup(config)?;
    let tools = tools::build(root)?;
    setup::setup_ptxas(config, &tools)?;
    Ok(tools)
}

/// The repository root: x.py sets the working folder to it.
fn repo_root() -> Result<PathBuf> {
    let dir = std::env::current_dir()?;
    if !dir.join("x.py").is_file() {
        bail!("run through ./x.py from the repository root");
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    #[test]
    fn commands_parse_and_every_one_has_help() {
        Cli::command().debug_assert();
        let parse = |line: &str| Cli::try_parse_from(line.split_whitespace());
        assert!(matches!(
            parse("x test codegen --bless").unwrap().command,
            Command::Test { suites, bless: true, .. } if suites == ["codegen"]
        ));
        assert!(matches!(
            parse("x run jacobi 64 48 --fast").unwrap().command,
            Command::Run { example, args } if example == "jacobi" && args == ["64", "48", "--fast"]
        ));
        assert!(matches!(
            parse("x bench workloads --reps 3").unwrap().command,
            Command::Bench { bench: bench::Bench::Workloads, reps: 3, out: None, ref sizes }
                if sizes.is_empty()
        ));
        assert!(matches!(
            parse("x bench saxpy --sizes 4096,1M,16m").unwrap().command,
            Command::Bench { ref sizes, .. } if *sizes == [4096, 1 << 20, 16 << 20]
        ));
        assert!(parse("x bench --sizes 0").is_err());
        assert!(matches!(
            parse("x bench --sizes 64K,4k").unwrap().command,
            Command::Bench { ref sizes, .. } if *sizes == [65536, 4096]
        ));
        assert!(parse("x bench --sizes 4G").is_err());
        assert!(matches!(
            parse("x bench").unwrap().command,
            Command::Bench { bench: bench::Bench::Saxpy, reps: 5, .. }
        ));
        assert!(parse("x bench --reps 0").is_err());
        assert!(parse("x nope").is_err());
        for command in ["setup", "test", "run", "install", "bundle", "bench"] {
            let help = parse(&format!("x {command} --help")).unwrap_err();
            assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp, "{command}");
        }
        assert_eq!(parse("x help").unwrap_err().kind(), clap::error::ErrorKind::DisplayHelp);
    }
}
