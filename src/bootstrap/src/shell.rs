//! Running commands: every external program bootstrap starts goes through here.

use std::process::{Command, Output};

use anyhow::{Context as _, Result, bail};

/// Runs `cmd`, inheriting the terminal; an error names `what` when it fails.
pub(crate) fn run(what: &str, cmd: &mut Command) -> Result<()> {
    if std::env::var_os("X_VERBOSE").is_some() {
        eprintln!("x: {cmd:?}");
    }
    let status = cmd.status().with_context(|| format!("starting {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

/// Runs `cmd` and captures its output, whatever its exit status.
pub(crate) fn capture(what: &str, cmd: &mut Command) -> Result<Output> {
    if std::env::var_os("X_VERBOSE").is_some() {
        eprintln!("x: {cmd:?}");
    }
    cmd.output().with_context(|| format!("starting {what}"))
}
