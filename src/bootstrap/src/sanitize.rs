//! `x.py test gpu --sanitize`: every program of the gpu suite run under each of
//! compute-sanitizer's tools that check a program's own use of the GPU (memcheck: out-of-bounds
//! and misaligned accesses, failed driver calls, leaks; racecheck: shared-memory hazards;
//! initcheck: reads of uninitialised device memory). Any report fails the run.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

/// The tools, in the order they run.
pub(crate) const TOOLS: &[&str] = &["memcheck", "racecheck", "initcheck"];

/// The exit status a program ends with when its sanitizer found errors.
const ERROR_EXIT: i32 = 86;

/// compute-sanitizer, found on PATH or in CUDA's default folder.
pub(crate) fn find() -> Result<PathBuf> {
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("compute-sanitizer"))
        .find(|p| p.is_file());
    let default = Path::new("/usr/local/cuda/bin/compute-sanitizer");
    match on_path {
        Some(path) => Ok(path),
        None if default.is_file() => Ok(default.to_owned()),
        None => bail!(
            "compute-sanitizer is not on PATH nor in /usr/local/cuda/bin (install the CUDA toolkit, or put its bin folder on PATH)"
        ),
    }
}

/// One tool over one run.
pub(crate) struct Sanitizer<'a> {
    pub(crate) binary: &'a Path,
    pub(crate) tool: &'a str,
    /// Where each process's report goes (`PID.log`).
    pub(crate) logs: &'a Path,
}

impl Sanitizer<'_> {
    /// The command that runs `program` under the tool: its children too, unless
    /// `this_process_only` (a program whose children fault on purpose).
    pub(crate) fn command(&self, program: &Path, this_process_only: bool) -> Command {
        let mut cmd = Command::new(self.binary);
        cmd.args(["--tool", self.tool])
            .arg(format!("--error-exitcode={ERROR_EXIT}"))
            .arg("--target-processes")
            .arg(if this_process_only { "application-only" } else { "all" })
            .arg("--log-file")
            .arg(self.logs.join("%p.log"))
            .arg(program);
        cmd
    }

    /// What the tool reported, over every process's log: empty when nothing.
    pub(crate) fn reports(&self) -> Result<String> {
        let mut found = String::new();
        for entry in std::fs::read_dir(self.logs)? {
            let text = std::fs::read_to_string(entry?.path())?;
            if !clean(&text) {
                found.push_str(&text);
            }
        }
        Ok(found)
    }
}

/// Whether one process's log reports nothing: its summary says 0 errors (memcheck,
/// initcheck) or 0 hazards (racecheck), and it has a summary at all.
fn clean(log: &str) -> bool {
    let summaries: Vec<&str> = log.lines().filter(|l| l.contains("SUMMARY:")).collect();
    !summaries.is_empty()
        && summaries.iter().all(|l| l.contains(": 0 errors") || l.contains(": 0 hazards"))
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn only_a_summary_of_nothing_is_clean() {
        assert!(clean("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"));
        assert!(clean("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"));
        let api_error = "========= Program hit CUDA_ERROR_NOT_FOUND (error 500) due to \"named \
                         symbol not found\" on CUDA API call to cuModuleGetGlobal_v2.\n\
                         ========= ERROR SUMMARY: 1 error\n";
        assert!(!clean(api_error));
        assert!(!clean("========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)"));
        // A log cut short (the process was killed) has no summary.
        assert!(!clean("========= COMPUTE-SANITIZER\n"));
    }
}
