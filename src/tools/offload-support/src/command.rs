//! Running external programs. A program that cannot be started is an error naming its command
//! line; one that exits with a failure, an error naming what it was run for (or, for a query, its
//! command line and what it printed on stderr).

use std::ffi::OsStr;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

/// Runs commands, each shown first where the tool asks for it (its verbose mode).
#[derive(Clone, Copy, Default)]
pub struct Runner {
    /// Shows a command before it runs: bootstrap's `x: ...` or offload-ld's lines on stderr,
    /// cargo-offload's shell lines on stdout. `None` shows nothing.
    pub echo: Option<fn(&Command)>,
}

impl Runner {
    /// Runs `cmd` to completion on the terminal; a non-zero exit is an error naming `what`.
    pub fn run(&self, what: &str, cmd: &mut Command) -> Result<()> {
        let status = self.status(cmd)?;
        if !status.success() {
            bail!("{what} failed ({status})");
        }
        Ok(())
    }

    /// Runs `cmd` to completion on the terminal and returns its exit status, whatever it is.
    pub fn status(&self, cmd: &mut Command) -> Result<ExitStatus> {
        self.show(cmd);
        cmd.status().with_context(|| running(cmd))
    }

    /// Runs `cmd` and captures its output, whatever its exit status.
    pub fn capture(&self, cmd: &mut Command) -> Result<Output> {
        self.show(cmd);
        cmd.output().with_context(|| running(cmd))
    }

    /// [`Runner::capture`] with a time limit: a program still running after `limit` is killed,
    /// and the second value is `true`. What it printed until then is kept.
    pub fn capture_within(&self, cmd: &mut Command, limit: Duration) -> Result<(Output, bool)> {
        use std::io::Read as _;

        self.show(cmd);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| running(cmd))?;
        // Each pipe drained on its own thread, so that a program filling one does not block.
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let waiting = || format!("waiting for `{}`", line(cmd));
        let deadline = Instant::now() + limit;
        let (status, timed_out) = loop {
            if let Some(status) = child.try_wait().with_context(waiting)? {
                break (status, false);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                break (child.wait().with_context(waiting)?, true);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let output = Output {
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        };
        Ok((output, timed_out))
    }

    /// Runs `cmd` and captures its output; a non-zero exit is an error naming the command line
    /// and carrying the end of its standard error ([`STDERR_TAIL_LINES`]).
    pub fn output(&self, cmd: &mut Command) -> Result<Output> {
        let output = self.capture(cmd)?;
        if !output.status.success() {
            bail!("`{}` failed ({}): {}", line(cmd), output.status, stderr_tail(&output.stderr));
        }
        Ok(output)
    }

    /// Runs the query `cmd` and returns its standard output; a failure as [`Runner::output`].
    pub fn stdout(&self, cmd: &mut Command) -> Result<String> {
        let output = self.output(cmd)?;
        String::from_utf8(output.stdout)
            .with_context(|| format!("`{}` printed something that is not UTF-8", line(cmd)))
    }

    fn show(&self, cmd: &Command) {
        if let Some(echo) = self.echo {
            echo(cmd);
        }
    }
}

/// How many lines of a failed command's standard error its error carries: the end, where a
/// compiler's summary is.
pub const STDERR_TAIL_LINES: usize = 40;

fn stderr_tail(stderr: &[u8]) -> String {
    let stderr = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = stderr.trim().lines().collect();
    lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..].join("\n")
}

fn running(cmd: &Command) -> String {
    format!("running `{}`", line(cmd))
}

/// The program and arguments of `cmd` as a shell line, for messages.
pub fn line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// `word` as a shell line shows it, for messages and dry runs: in single quotes where it is
/// empty or holds a space, a quote, `;` or `$` (a single quote inside as `'\''`). (Not
/// `shell_words::quote`, which also quotes `(`, `=` and the like: the dry-run lines are a format
/// that tests and users read.)
pub fn quote(word: &OsStr) -> String {
    let word = word.to_string_lossy();
    if word.is_empty() || word.contains([' ', '"', '\'', ';', '$']) {
        format!("'{}'", word.replace('\'', r"'\''"))
    } else {
        word.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_program_past_its_limit_is_killed() {
        let runner = Runner::default();
        let (out, timed_out) = runner
            .capture_within(Command::new("sleep").arg("30"), Duration::from_millis(200))
            .unwrap();
        assert!(timed_out && !out.status.success());
        let (out, timed_out) =
            runner.capture_within(Command::new("echo").arg("hi"), Duration::from_secs(30)).unwrap();
        assert!(!timed_out && out.status.success());
        assert_eq!(out.stdout, b"hi\n");
    }

    #[test]
    fn errors_name_the_command_line() {
        let runner = Runner::default();
        let missing = runner.run("the build", &mut Command::new("/nonexistent/tool")).unwrap_err();
        assert!(format!("{missing:#}").starts_with("running `/nonexistent/tool`: "), "{missing:#}");
        let failed = runner.run("the build", Command::new("sh").args(["-c", "exit 3"]));
        assert_eq!(failed.unwrap_err().to_string(), "the build failed (exit status: 3)");
        let query = runner.stdout(Command::new("sh").args(["-c", "echo no >&2; exit 1"]));
        assert_eq!(
            query.unwrap_err().to_string(),
            "`sh -c 'echo no >&2; exit 1'` failed (exit status: 1): no"
        );
        assert_eq!(runner.stdout(Command::new("echo").arg("yes")).unwrap(), "yes\n");
        // A long stderr: its end, where a compiler's summary is.
        let long = runner.output(Command::new("sh").args(["-c", "seq 1 100 >&2; exit 1"]));
        let message = long.unwrap_err().to_string();
        assert!(message.contains("(exit status: 1): 61\n62\n"), "{message}");
        assert!(message.ends_with("\n100"), "{message}");
    }

    #[test]
    fn commands_are_shown_before_they_run() {
        use std::sync::atomic::{AtomicBool, Ordering};
        static SHOWN: AtomicBool = AtomicBool::new(false);
        let runner = Runner { echo: Some(|_| SHOWN.store(true, Ordering::SeqCst)) };
        runner.run("true", &mut Command::new("true")).unwrap();
        assert!(SHOWN.load(Ordering::SeqCst));
    }

    #[test]
    fn words_are_quoted_where_a_shell_would_split_them() {
        let cmd = {
            let mut cmd = Command::new("cargo");
            cmd.args(["build", "", "a b", "x;y", "$HOME", "--cfg=k=\"v\"", "it's"]);
            cmd
        };
        assert_eq!(line(&cmd), r#"cargo build '' 'a b' 'x;y' '$HOME' '--cfg=k="v"' 'it'\''s'"#);
    }
}
