//! The build entry behind `x.py`: `setup | build | test [SUITE...] | run EXAMPLE [ARGS...]`.

mod config;
mod programs;
mod setup;
mod shell;
mod test;
mod tools;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context as _, Result, bail};

use crate::config::Config;

const USAGE: &str = "usage: ./x.py <command>
  setup                 install what the build needs (Debian packages as root, ptxas into .venv)
  build                 build the tools (cargo-offload, offload-ld, offload-lower, compiletest)
  test [SUITE...]       run test suites: unit, codegen, ui, run (default: all of them)
  run EXAMPLE [ARGS...] build an example of examples/ through the offload pipeline and run it";

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
        "setup" => setup::setup(&root, &config),
        "build" => {
            setup::setup(&root, &config)?;
            tools::build(&root).map(drop)
        }
        "test" => {
            setup::setup(&root, &config)?;
            let tools = tools::build(&root)?;
            test::test(&root, &config, &tools, rest)
        }
        "run" => {
            let Some((example, example_args)) = rest.split_first() else {
                bail!("which example? (./x.py run saxpy; see examples/)");
            };
            let dir = root.join("examples").join(example);
            if !dir.join("Cargo.toml").is_file() {
                bail!("no example `{example}` in examples/ (try saxpy or jacobi)");
            }
            setup::setup(&root, &config)?;
            let tools = tools::build(&root)?;
            programs::build(&root, &tools, &config, &dir)?;
            let bin = programs::target_dir(&root).join("offload/host/x86_64-unknown-linux-gnu/release").join(example);
            let status = Command::new(&bin).args(example_args).status().with_context(|| format!("running {}", bin.display()))?;
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

/// The repository root: x.py sets the working folder to it.
fn repo_root() -> Result<PathBuf> {
    let dir = std::env::current_dir()?;
    if !dir.join("x.py").is_file() {
        bail!("run through ./x.py from the repository root");
    }
    Ok(dir)
}
