//! The build entry behind `x.py`: `setup | build | test [SUITE...] | run EXAMPLE [ARGS...] |
//! install | bundle | bench [saxpy|workloads|build]`, on clap (`./x.py help`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};

use offload_bootstrap::config::Config;
use offload_bootstrap::programs::{self, Flavor};
use offload_bootstrap::{bundle, install, prepare, repo_root, sanitize, shell, test, tools};

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
    /// ./run-on-gpu.sh bench there); or the build time of examples/saxpy, here. The harness is
    /// src/tools/bench: `./x.py bench --help` is its.
    #[command(disable_help_flag = true)]
    Bench {
        /// The harness's arguments: [saxpy|workloads|build] [--reps R] [--out DIR] [--sizes N,...]
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
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
        Command::Bench { args } => {
            if tools::have_cargo() {
                tools::build(&root)?;
            }
            shell::runner().run("the benchmark harness", tools::bench(&root).args(&args))
        }
        Command::Bundle => {
            let tools = prepare(&root, &config)?;
            bundle::bundle(&root, &config, &tools, |out| {
                let mut add = tools::bench(&root);
                add.arg("--bundle-into").arg(out);
                shell::runner().run("the benchmarks added to the bundle", &mut add)
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
            Command::Bench { args } if args == ["workloads", "--reps", "3"]
        ));
        assert!(parse("x nope").is_err());
        for command in ["setup", "test", "run", "install", "bundle"] {
            let help = parse(&format!("x {command} --help")).unwrap_err();
            assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp, "{command}");
        }
        assert_eq!(parse("x help").unwrap_err().kind(), clap::error::ErrorKind::DisplayHelp);
    }
}
