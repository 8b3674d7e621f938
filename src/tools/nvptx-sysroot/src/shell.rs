//! The one place that prints progress and runs external commands (honouring `--verbose`).

use std::cell::Cell;
use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Output};
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// How many lines of a failed command's stderr an error message carries.
const STDERR_TAIL_LINES: usize = 40;

/// Progress lines on stderr: `offload: <stage>... <seconds>s`, one per stage.
pub(crate) struct Shell {
    verbose: bool,
    /// A stage line was started and not yet ended with its elapsed time.
    line_open: Cell<bool>,
}

impl Shell {
    pub(crate) fn new(verbose: bool) -> Self {
        Self { verbose, line_open: Cell::new(false) }
    }

    /// Runs `work` as one stage: prints `offload: <what>...`, then its elapsed seconds.
    pub(crate) fn stage<T>(&self, what: &str, work: impl FnOnce() -> Result<T>) -> Result<T> {
        eprint!("offload: {what}...");
        let _ = std::io::stderr().flush();
        self.line_open.set(true);
        let start = Instant::now();
        let result = work();
        let outcome = match &result {
            Ok(_) => format!("{:.1}s", start.elapsed().as_secs_f64()),
            Err(_) => "failed".to_owned(),
        };
        if self.line_open.replace(false) {
            eprintln!(" {outcome}");
        } else {
            eprintln!("offload: {what}... {outcome}");
        }
        result
    }

    /// Prints `offload: <message>` when verbose.
    pub(crate) fn note(&self, message: &str) {
        if self.verbose {
            self.end_line();
            eprintln!("offload: {message}");
        }
    }

    /// Ends an open stage line, so that other output starts on a line of its own.
    fn end_line(&self) {
        if self.line_open.replace(false) {
            eprintln!();
        }
    }

    /// Runs `cmd` with its output captured; a failure becomes an error that shows the
    /// command line and the end of its stderr.
    pub(crate) fn run(&self, cmd: &mut Command) -> Result<Output> {
        let line = command_line(cmd);
        self.note(&format!("running {line}"));
        let program = cmd.get_program().to_string_lossy().into_owned();
        let output = cmd.output().with_context(|| format!("cannot run `{program}`"))?;
        if !output.status.success() {
            bail!("`{line}` failed ({})\n{}", output.status, stderr_tail(&output.stderr));
        }
        Ok(output)
    }
}

/// `cmd` as a line a shell would accept: environment, program and quoted arguments.
fn command_line(cmd: &Command) -> String {
    let envs = cmd.get_envs().filter_map(|(key, value)| {
        value.map(|value| format!("{}={}", key.to_string_lossy(), quote(value)))
    });
    let words = std::iter::once(quote(cmd.get_program())).chain(cmd.get_args().map(quote));
    envs.chain(words).collect::<Vec<_>>().join(" ")
}

/// Single-quotes `word` when a shell would otherwise split or expand it.
fn quote(word: &OsStr) -> String {
    let word = word.to_string_lossy();
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.into_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn stderr_tail(stderr: &[u8]) -> String {
    let stderr = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let mut cmd = Command::new("rustc");
        cmd.env("A", "1").args(["--cfg", "feature=\"mem\"", "it's", "-Copt-level=3"]);
        assert_eq!(
            command_line(&cmd),
            r#"A=1 rustc --cfg 'feature="mem"' 'it'\''s' -Copt-level=3"#
        );
    }
}
