//! The one place external commands run: honours `--verbose` and `--dry-run`. Commands that
//! make something ([`Runner::run`]) are the plan a dry run prints; read-only queries of tools
//! ([`Runner::queries`]: `rustc -V`, `rustup which rustc`) run in dry runs too, since the plan
//! depends on their answers, and are printed under `--verbose`. Both run through
//! `offload_support::command`.

use std::ffi::OsString;
use std::io::{IsTerminal as _, Write as _};
use std::process::Command;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};
use offload_support::command::{self as support, quote};

/// How commands are run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Runner {
    /// Print each command before running it.
    pub(crate) verbose: bool,
    /// Print each command instead of running it.
    pub(crate) dry_run: bool,
    /// Keep what commands print here instead (a build that runs beside another, whose output
    /// is shown only where it matters).
    pub(crate) held: Option<Held>,
}

/// What held commands printed, in order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Held(Arc<Mutex<Vec<u8>>>);

impl Held {
    fn push(&self, bytes: &[u8]) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(bytes);
    }

    /// Prints what was held, on stderr.
    pub(crate) fn show(&self) {
        let bytes = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        let _ = std::io::stderr().write_all(&bytes);
    }
}

/// A command to run, with the environment it adds (`None`: a variable it removes).
#[derive(Clone)]
pub(crate) struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(String, Option<OsString>)>,
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
        self.env.push((k.to_owned(), Some(v.into())));
        self
    }

    pub(crate) fn env_remove(mut self, k: &str) -> Self {
        self.env.push((k.to_owned(), None));
        self
    }

    /// The flags cargo gives rustc: in `RUSTFLAGS`, or in `CARGO_ENCODED_RUSTFLAGS` where a flag
    /// holds whitespace (a path with spaces), which `RUSTFLAGS` would split. The other variable
    /// is removed: cargo reads `CARGO_ENCODED_RUSTFLAGS` first, even empty.
    pub(crate) fn rustflags(self, flags: &[String]) -> Self {
        if flags.iter().any(|f| f.contains(char::is_whitespace)) {
            self.env("CARGO_ENCODED_RUSTFLAGS", flags.join("\x1f")).env_remove("RUSTFLAGS")
        } else {
            self.env("RUSTFLAGS", flags.join(" ")).env_remove("CARGO_ENCODED_RUSTFLAGS")
        }
    }

    /// The command as a shell line: `K=V program args`.
    pub(crate) fn display(&self) -> String {
        let mut parts = Vec::new();
        // Removed variables are not shown; `\x1f` (CARGO_ENCODED_RUSTFLAGS) is shown as `\x1f`.
        parts.extend(self.env.iter().filter_map(|(k, v)| {
            let v = OsString::from(v.as_ref()?.to_string_lossy().replace('\x1f', "\\x1f"));
            Some(format!("{k}={}", quote(&v)))
        }));
        parts.push(quote(&self.program));
        parts.extend(self.args.iter().map(|a| quote(a)));
        parts.join(" ")
    }

    fn to_command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        for (k, v) in &self.env {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        c
    }
}

impl Runner {
    /// This runner, holding what its commands print.
    pub(crate) fn holding(&self) -> (Runner, Held) {
        let held = Held::default();
        (Runner { held: Some(held.clone()), ..self.clone() }, held)
    }

    /// Runs `cmd` to completion; a non-zero exit is an error naming `what`.
    pub(crate) fn run(&self, what: &str, cmd: &Cmd) -> Result<()> {
        if self.dry_run || self.verbose {
            match &self.held {
                Some(held) => held.push(format!("{}\n", cmd.display()).as_bytes()),
                None => println!("{}", cmd.display()),
            }
        }
        if self.dry_run {
            return Ok(());
        }
        let mut command = cmd.to_command();
        let status = match &self.held {
            None => support::Runner::default().status(&mut command)?,
            Some(held) => {
                // Colours as cargo would give the terminal the output is for.
                if std::io::stderr().is_terminal() && std::env::var_os("CARGO_TERM_COLOR").is_none()
                {
                    command.env("CARGO_TERM_COLOR", "always");
                }
                let out = support::Runner::default().capture(&mut command)?;
                held.push(&out.stdout);
                held.push(&out.stderr);
                out.status
            }
        };
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
        let status = support::Runner::default().status(&mut cmd.to_command())?;
        use std::os::unix::process::ExitStatusExt as _;
        match (status.code(), status.signal()) {
            (Some(code), _) => Ok(code),
            // As a shell says it, and with a shell's status: 128 + the signal.
            (None, Some(signal)) => {
                eprintln!(
                    "offload: error: {} was killed by signal {signal} ({}){}",
                    cmd.program.to_string_lossy(),
                    signal_name(signal),
                    if status.core_dumped() { ", core dumped" } else { "" },
                );
                Ok(128 + signal)
            }
            (None, None) => Ok(1),
        }
    }

    /// The runner of read-only queries: they run in dry runs too, and are printed under
    /// `--verbose` (but in a dry run, whose output is the plan).
    pub(crate) fn queries(&self) -> support::Runner {
        let echo: fn(&Command) = |cmd| println!("{}", support::line(cmd));
        support::Runner { echo: (self.verbose && !self.dry_run).then_some(echo) }
    }
}

/// The C library's description of `signal` ("Segmentation fault").
fn signal_name(signal: i32) -> String {
    // SAFETY: strsignal returns a string for any number (an "Unknown signal" one at worst),
    // read at once, before another call could overwrite it.
    let name = unsafe { libc::strsignal(signal) };
    if name.is_null() {
        return "unknown".into();
    }
    // SAFETY: a non-null result is a NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_killed_by_a_signal_gets_a_shells_status() {
        let runner = Runner::default();
        let killed = Cmd::new("sh").args(["-c", "kill -SEGV $$"]);
        assert_eq!(runner.run_program(&killed).unwrap(), 128 + libc::SIGSEGV);
        assert_eq!(runner.run_program(&Cmd::new("sh").args(["-c", "exit 3"])).unwrap(), 3);
    }

    #[test]
    fn signals_have_their_names() {
        assert_eq!(signal_name(libc::SIGSEGV), "Segmentation fault");
    }
}
