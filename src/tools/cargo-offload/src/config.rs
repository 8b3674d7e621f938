//! The choices every stage shares: how commands run, which cargo and link stage, the ABI.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::command::Runner;

/// Choices shared by every stage.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) runner: Runner,
    pub(crate) cargo: String,
    pub(crate) offload_ld: PathBuf,
    pub(crate) abi: String,
    pub(crate) runtime_dir: PathBuf,
    pub(crate) save_temps: bool,
}

impl Config {
    /// The configuration of a build whose commands `runner` runs; `target_dir` (`--target-dir`)
    /// becomes the target folder of every cargo this tool runs.
    pub(crate) fn new(
        runner: Runner,
        target_dir: Option<&Path>,
        abi: &str,
        runtime_dir: &Path,
        save_temps: bool,
    ) -> Result<Self> {
        if let Some(dir) = target_dir {
            let dir = std::path::absolute(dir)
                .with_context(|| format!("the target directory {}", dir.display()))?;
            // Every cargo this tool runs, and `cargo metadata`, take it from there.
            // SAFETY: no other thread runs yet: the builds start after the configuration.
            unsafe { std::env::set_var("CARGO_TARGET_DIR", dir) };
        }
        let offload_ld = offload_ld()?;
        Ok(Config {
            runner,
            cargo: std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()),
            offload_ld,
            abi: abi.to_owned(),
            runtime_dir: runtime_dir.to_path_buf(),
            save_temps,
        })
    }

    /// Flags passed to every cargo invocation.
    pub(crate) fn cargo_flags(&self) -> Vec<&'static str> {
        if self.runner.verbose { vec![] } else { vec!["--quiet"] }
    }

    /// A progress line on stderr (not in dry runs, whose stdout is the plan).
    pub(crate) fn status(&self, what: &str) {
        if !self.runner.dry_run {
            eprintln!("offload: {what}");
        }
    }
}

/// The link stage: `OFFLOAD_LD`, else `offload-ld` beside this tool.
pub(crate) fn offload_ld() -> Result<PathBuf> {
    match std::env::var_os("OFFLOAD_LD") {
        Some(p) => Ok(PathBuf::from(p)),
        None => Ok(std::env::current_exe()
            .context("locating cargo-offload")?
            .with_file_name("offload-ld")),
    }
}
