//! The build entry behind `x.py`: `setup | build | test [SUITE...] | run EXAMPLE [ARGS...]`.

mod anchor_clang;
mod bench;
mod bundle;
mod config;
mod install;
mod programs;
mod setup;
mod shell;
mod test;
mod tools;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context as _, Result, bail};

use crate::config::Config;
use crate::programs::Flavor;

const USAGE: &str = "usage: ./x.py <command>
  setup, build          install what the build needs (Debian packages as root, ptxas into
                        .venv) and build the tools (cargo-offload, offload-ld, offload-lower,
                        compiletest)
  test [SUITE...] [--bless]
                        run test suites: unit, codegen, ptx, ui, run, tsan, install (default: all
                        of them), or gpu
                        (the run suite on an NVIDIA GPU, NVIDIA image only; on a machine without
                        cargo it runs the programs built here before); a test file of codegen or
                        ui (tests/codegen/NAME.rs) runs that test; --bless rewrites ui .stderr
  run EXAMPLE [ARGS...] build an example of examples/ through the offload pipeline and run it
  install [--root DIR] [--debug]
                        cargo-offload and offload-ld into DIR/bin (cargo's default:
                        ~/.cargo/bin), for packages anywhere (cargo offload new NAME)
  bundle                build/gpu-bundle: the programs, the runtime's .debs and a script, for a
                        GPU machine without Rust (./run-on-gpu.sh test gpu there)
  bench [--reps R] [--out DIR]
                        benches/saxpy beside CUDA by hand and clang OpenMP on an NVIDIA GPU:
                        bundles here, measures where there is a GPU (./run-on-gpu.sh bench
                        there); table, results.json and chart.svg in build/bench
  bench build [--reps R] [--out DIR]
                        the build time of examples/saxpy (clean, after an edit, unchanged)
                        beside a stock cargo build, here; table and results.json in
                        build/bench-build
  bench workloads [--reps R] [--out DIR]
                        benches/workloads (reduce, jacobi, sgemm, transpose, histogram)
                        beside CUDA by hand, CUB and cuBLAS on an NVIDIA GPU, as bench does;
                        in build/bench-workloads";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("offload: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<()> {
    let root = repo_root()?;
    let config = Config::load(&root)?;
    let Some((command, rest)) = args.split_first() else {
        println!("{USAGE}");
        return Ok(());
    };
    match command.as_str() {
        "setup" | "build" => prepare(&root, &config).map(drop),
        "test" if !tools::have_cargo() => test::test_prebuilt(&root, rest),
        "test" => {
            let tools = prepare(&root, &config)?;
            test::test(&root, &config, &tools, rest)
        }
        "bench" => bench::bench(&root, &config, rest, prepare),
        "bundle" => {
            let tools = prepare(&root, &config)?;
            bundle::bundle(&root, &config, &tools)
        }
        "install" => {
            let options = install::Options::parse(rest)?;
            prepare(&root, &config)?;
            install::install(&root, &options).map(drop)
        }
        "run" => {
            let Some((example, example_args)) = rest.split_first() else {
                bail!("which example? (./x.py run saxpy; see examples/)");
            };
            let dir = root.join("examples").join(example);
            if !dir.join("Cargo.toml").is_file() {
                bail!("no example `{example}` in examples/ (try saxpy or jacobi)");
            }
            // A machine without cargo runs the program built before (a GPU machine).
            if tools::have_cargo() {
                let tools = prepare(&root, &config)?;
                programs::build(&root, &tools, &config, &dir, Flavor::Portable)?;
            }
            let bin = Flavor::Portable.bin_dir(&root).join(example);
            let status = Command::new(&bin)
                .args(example_args)
                .status()
                .with_context(|| format!("running {}", bin.display()))?;
            if !status.success() {
                bail!("{example} failed ({status})");
            }
            Ok(())
        }
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command `{other}`\n{USAGE}"),
    }
}

/// Everything the other commands need: packages, the tools, ptxas.
fn prepare(root: &std::path::Path, config: &Config) -> Result<tools::Tools> {
    setup::setup(config)?;
    let tools = tools::build(root)?;
    setup::setup_ptxas(root, config, &tools)?;
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
