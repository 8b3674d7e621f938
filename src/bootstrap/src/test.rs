//! `x.py test [SUITE...]`: the suites, each a named thing x.py runs.
//!
//! `unit` (cargo test of the workspace), `codegen` (FileCheck of the lowered IR), `ui`
//! (what the compiler must reject), `run` (programs through the runtime's host-offload
//! plugin, copies counted). `gpu` runs the run suite on an NVIDIA GPU and is only run when
//! asked for.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

use crate::config::Config;
use crate::programs::{self, RUN_SUITE};
use crate::shell;
use crate::tools::Tools;

const DEFAULT_SUITES: &[&str] = &["unit", "codegen", "ui", "run"];

pub(crate) fn test(root: &Path, config: &Config, tools: &Tools, requested: &[String]) -> Result<()> {
    let suites: Vec<String> = if requested.is_empty() {
        DEFAULT_SUITES.iter().map(|s| s.to_string()).collect()
    } else {
        requested.iter().map(|s| suite_name(s)).collect::<Result<_>>()?
    };
    let (mut passed, mut failed) = (0usize, 0usize);
    for suite in &suites {
        eprintln!("x: test suite `{suite}`");
        let result = match suite.as_str() {
            "unit" => unit(root),
            "codegen" => compiletest(root, tools, "tests/codegen", "codegen"),
            "ui" => compiletest(root, tools, "tests/ui", "ui"),
            "run" => run_suite(root, config, tools),
            _ => unreachable!("suite names are checked"),
        };
        match result {
            Ok(()) => passed += 1,
            Err(e) => {
                eprintln!("x: suite `{suite}` failed: {e:#}");
                failed += 1;
            }
        }
    }
    println!("suites: {passed} passed, {failed} failed");
    if failed > 0 {
        bail!("{failed} test suite(s) failed");
    }
    Ok(())
}

/// `tests/codegen` -> `codegen`; plain names pass through.
fn suite_name(arg: &str) -> Result<String> {
    let name = arg.trim_end_matches('/').rsplit('/').next().unwrap_or(arg);
    match name {
        "unit" | "codegen" | "ui" | "run" => Ok(name.to_owned()),
        _ => bail!("no test suite `{arg}` (suites: unit, codegen, ui, run)"),
    }
}

fn unit(root: &Path) -> Result<()> {
    shell::run("cargo test", Command::new("cargo").current_dir(root).args(["test", "--workspace", "--quiet"]))
}

fn compiletest(root: &Path, tools: &Tools, dir: &str, mode: &str) -> Result<()> {
    shell::run(&format!("{dir} ({mode})"), Command::new(&tools.compiletest).current_dir(root).arg(dir).args(["--mode", mode]))
}

/// Builds every run-suite package, then runs each program as its `//@ run:` lines say.
fn run_suite(root: &Path, config: &Config, tools: &Tools) -> Result<()> {
    let (mut passed, mut failed) = (0usize, 0usize);
    for package in RUN_SUITE {
        let dir = root.join(package);
        programs::build(root, tools, config, &dir)?;
        for program in programs::programs(root, &dir)? {
            if program.runs.is_empty() {
                bail!("{} has no //@ run: line", program.source.display());
            }
            for run in &program.runs {
                let name = format!("{} {}", program.source.strip_prefix(root).unwrap_or(&program.source).display(), run.args.join(" "));
                let result = programs::run_checked(&program, run)?;
                if result.ok {
                    println!("run {name} ... ok");
                    passed += 1;
                } else {
                    println!("run {name} ... FAILED: {}\n{}", result.detail, result.stdout);
                    failed += 1;
                }
            }
        }
    }
    println!("run: {passed} passed, {failed} failed");
    if failed > 0 {
        bail!("{failed} run test(s) failed");
    }
    Ok(())
}
