//! The one place external commands run: honours `--verbose` and `--dry-run`.

use std::ffi::OsString;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// How commands are run.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Runner {
    /// Print each command before running it.
    pub(crate) verbose: bool,
    /// Print each command instead of running it.
    pub(crate) dry_run: bool,
}

/// A command to run, with the environment it adds.
pub(crate) struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
}

impl Cmd {
    pub(crate) fn new(program: impl Into<OsString>) -> Self {
        Cmd { program: program.into(), args: Vec::new(), env: Vec::new() }
    }

    pub(crate) fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    pub(crate) fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub(crate) fn env(mut self, k: &str, v: impl Into<OsString>) -> Self {
        self.env.push((k.to_owned(), v.into()));
        self
    }

    /// The command as a shell line: `K=V program args`.
    pub(crate) fn display(&self) -> String {
        let quote = |s: &OsString| {
            let s = s.to_string_lossy();
            if s.is_empty() || s.contains([' ', '"', '\'', ';', '$']) {
                format!("'{s}'")
            } else {
                s.into_owned()
            }
        };
        let mut parts = Vec::new();
        parts.extend(self.env.iter().map(|(k, v)| format!("{k}={}", quote(v))));
        parts.push(quote(&self.program));
        parts.extend(self.args.iter().map(quote));
        parts.join(" ")
    }

    fn to_command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }
}

impl Runner {
    /// Runs `cmd` to completion; a non-zero exit is an error naming `what`.
    pub(crate) fn run(&self, what: &str, cmd: &Cmd) -> Result<()> {
        if self.dry_run || self.verbose {
            println!("{}", cmd.display());
        }
        if self.dry_run {
            return Ok(());
        }
        let status = cmd
            .to_command()
            .status()
            .with_context(|| format!("running {}", cmd.program.to_string_lossy()))?;
        if !status.success() {
            bail!("{what} failed ({status})");
        }
        Ok(())
    }

    /// Runs a program the user asked for, returning its exit code.
    pub(crate) fn run_program(&self, cmd: &Cmd) -> Result<i32> {
        if self.dry_run || self.verbose {
            println!("{}", cmd.display());
        }
        if self.dry_run {
            return Ok(0);
        }
        let status = cmd
            .to_command()
            .status()
            .with_context(|| format!("running {}", cmd.program.to_string_lossy()))?;
        Ok(status.code().unwrap_or(1))
    }
}
