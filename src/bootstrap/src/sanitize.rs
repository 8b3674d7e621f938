//! `x.py test gpu --sanitize`: every program of the gpu suite run under each of
//! compute-sanitizer's tools that check a program's own use of the GPU (memcheck: out-of-bounds
//! and misaligned accesses, failed driver calls; racecheck: shared-memory hazards;
//! initcheck: reads of uninitialised device memory). Any report fails the run, but a failed
//! driver call the program provokes on purpose and names (`//@ sanitize-expects: CALL`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

/// A tool of compute-sanitizer's that checks a program's own use of the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Tool {
    Memcheck,
    Racecheck,
    Initcheck,
}

impl Tool {
    /// Its name on compute-sanitizer's command line.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Memcheck => "memcheck",
            Tool::Racecheck => "racecheck",
            Tool::Initcheck => "initcheck",
        }
    }
}

/// The tools `--sanitize[=TOOLS]` asked for, in the order they run: none without the flag, all
/// three with it alone.
pub fn chosen(asked: Option<Vec<Tool>>) -> Vec<Tool> {
    let all = [Tool::Memcheck, Tool::Racecheck, Tool::Initcheck];
    match asked {
        None => Vec::new(),
        Some(named) if named.is_empty() => all.to_vec(),
        Some(named) => all.into_iter().filter(|t| named.contains(t)).collect(),
    }
}

/// The variable a program run under a tool finds set to the tool's name: the tool's own memory
/// is in the process's, so a program that measures its memory knows not to judge it.
pub const ENV: &str = "OFFLOAD_SANITIZER";

/// libomptarget's variable for the size above which it frees device memory with `cuMemFree`
/// when a mapping ends (below it, its memory manager keeps the memory for the next mapping of
/// that size, and frees it at exit).
const RUNTIME_FREES_ABOVE: &str = "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD";

/// Under racecheck, the runtime keeps every allocation up to 1 GiB (more than any program of
/// the suite maps) for reuse until exit instead of freeing it: racecheck of CUDA 13.0 can
/// deadlock when one thread calls `cuMemFree` while others launch kernels into a shared stream
/// and wait for events on it (docs/RELIABILITY.md, with what was measured). The kernels the
/// tool checks are the same.
const KEEP_RUNTIME_ALLOCATIONS: u64 = 1 << 30;

/// compute-sanitizer, found on PATH or in CUDA's default folder.
pub fn find() -> Result<PathBuf> {
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
pub struct Sanitizer<'a> {
    pub binary: &'a Path,
    pub tool: Tool,
    /// Where each process's report goes (`PID.log`).
    pub logs: &'a Path,
    /// Driver calls the program makes fail on purpose (a pinned allocation too large for the
    /// machine): their reports are expected.
    pub expected: &'a [String],
}

impl Sanitizer<'_> {
    /// The command that runs `program` under the tool: its children too, unless
    /// `this_process_only` (a program whose children fault on purpose). Under racecheck the
    /// runtime keeps its device memory until exit ([`KEEP_RUNTIME_ALLOCATIONS`]).
    pub fn command(&self, program: &Path, this_process_only: bool) -> Command {
        let mut cmd = Command::new(self.binary);
        cmd.args(["--tool", self.tool.name()])
            .arg("--target-processes")
            .arg(if this_process_only { "application-only" } else { "all" })
            .arg("--log-file")
            .arg(self.logs.join("%p.log"))
            .arg(program)
            .env(ENV, self.tool.name());
        if self.tool == Tool::Racecheck {
            cmd.env(RUNTIME_FREES_ABOVE, KEEP_RUNTIME_ALLOCATIONS.to_string());
        }
        cmd
    }

    /// What the tool reported, over every process's log: empty when nothing.
    pub fn reports(&self) -> Result<String> {
        let mut found = String::new();
        for entry in std::fs::read_dir(self.logs)? {
            let text = std::fs::read_to_string(entry?.path())?;
            if !clean(&text, self.expected) {
                found.push_str(&text);
            }
        }
        Ok(found)
    }
}

/// Whether one process's log reports nothing but failures of the `expected` driver calls: it
/// has a summary, and its count of errors (memcheck, initcheck) or hazards (racecheck) is the
/// number of those failures.
fn clean(log: &str, expected: &[String]) -> bool {
    let provoked = |line: &&str| {
        expected.iter().any(|call| line.trim_end().ends_with(&format!("API call to {call}.")))
    };
    let allowed = log.lines().filter(|l| l.contains("Program hit ")).filter(provoked).count();
    let summaries: Vec<&str> = log.lines().filter(|l| l.contains("SUMMARY:")).collect();
    let count = |line: &str| {
        let after = line.split("SUMMARY:").nth(1)?;
        after.split_whitespace().next()?.parse::<usize>().ok()
    };
    !summaries.is_empty() && summaries.iter().all(|l| count(l) == Some(allowed))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{KEEP_RUNTIME_ALLOCATIONS, RUNTIME_FREES_ABOVE, Sanitizer, Tool, clean};

    #[test]
    fn only_a_summary_of_nothing_is_clean() {
        let none: &[String] = &[];
        assert!(clean("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", none));
        assert!(clean(
            "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n",
            none
        ));
        let api_error = "========= Program hit CUDA_ERROR_NOT_FOUND (error 500) due to \"named \
                         symbol not found\" on CUDA API call to cuModuleGetGlobal_v2.\n\
                         ========= ERROR SUMMARY: 1 error\n";
        assert!(!clean(api_error, none));
        assert!(!clean(
            "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)",
            none
        ));
        // A log cut short (the process was killed) has no summary.
        assert!(!clean("========= COMPUTE-SANITIZER\n", none));
    }

    #[test]
    fn only_racecheck_keeps_the_runtime_from_freeing() {
        let sanitizer = |tool| Sanitizer {
            binary: Path::new("compute-sanitizer"),
            tool,
            logs: Path::new("logs"),
            expected: &[],
        };
        let kept = |tool| {
            let cmd = sanitizer(tool).command(Path::new("program"), false);
            cmd.get_envs().any(|(name, value)| {
                let kept = KEEP_RUNTIME_ALLOCATIONS.to_string();
                name == RUNTIME_FREES_ABOVE && value.is_some_and(|v| *v == *kept)
            })
        };
        assert!(kept(Tool::Racecheck));
        assert!(!kept(Tool::Memcheck) && !kept(Tool::Initcheck));
    }

    #[test]
    fn failures_the_program_provokes_are_expected_and_no_others() {
        let expected = ["cuMemAllocHost_v2".to_owned()];
        let oom = "========= Program hit CUDA_ERROR_OUT_OF_MEMORY (error 2) due to \"out of \
                   memory\" on CUDA API call to cuMemAllocHost_v2.\n";
        let other = "========= Program hit CUDA_ERROR_NOT_FOUND (error 500) due to \"named \
                     symbol not found\" on CUDA API call to cuModuleGetGlobal_v2.\n";
        assert!(clean(&format!("{oom}========= ERROR SUMMARY: 1 error\n"), &expected));
        assert!(!clean(&format!("{oom}{other}========= ERROR SUMMARY: 2 errors\n"), &expected));
        // Counted errors that are not the call's reports (an invalid access, say).
        assert!(!clean(&format!("{oom}========= ERROR SUMMARY: 2 errors\n"), &expected));
    }
}
