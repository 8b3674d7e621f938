//! Read-only queries of tools (`rustup which rustc`, `ptxas --version`): the plan depends on
//! their answers, so they run in dry runs too, and are printed under `--verbose`.
//!
//! `Runner` (command.rs) only runs commands for their effect; this belongs there as a
//! `Runner::output` once that file can change.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use crate::command::{Cmd, Runner};

/// Runs `program args` and returns its standard output; a non-zero exit is an error carrying
/// its standard error.
pub(crate) fn stdout(runner: &Runner, program: &Path, args: &[&str]) -> Result<String> {
    stdout_in(runner, None, program, args)
}

/// [`stdout`], run in `dir` where given.
pub(crate) fn stdout_in(
    runner: &Runner,
    dir: Option<&Path>,
    program: &Path,
    args: &[&str],
) -> Result<String> {
    if runner.verbose && !runner.dry_run {
        println!("{}", Cmd::new(program).args(args).display());
    }
    let mut command = Command::new(program);
    command.args(args);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let output = command.output().with_context(|| format!("running {}", program.display()))?;
    if !output.status.success() {
        bail!(
            "`{}` failed ({}): {}",
            Cmd::new(program).args(args).display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout)
        .with_context(|| format!("{} printed something that is not utf-8", program.display()))
}
