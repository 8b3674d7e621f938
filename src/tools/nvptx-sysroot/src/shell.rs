//! The one place that prints progress and runs external commands (honouring `--verbose`),
//! through offload-support's runner.

use std::cell::Cell;
use std::io::Write;
use std::process::{Command, Output};
use std::time::Instant;

use anyhow::Result;
use offload_support::command::{self, Runner};

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
        self.note(&format!("running {}", command::line(cmd)));
        Runner::default().output(cmd)
    }
}
