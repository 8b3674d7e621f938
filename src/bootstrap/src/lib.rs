//! The build entry behind `x.py`: its commands, and what the benchmark harness (src/tools/bench,
//! which `x.py bench` runs) builds and bundles with. The command line is `main.rs`.

pub mod bundle;
pub mod config;
pub mod docs_suite;
pub mod install;
pub mod install_suite;
pub mod programs;
pub mod sanitize;
pub mod setup;
pub mod shell;
pub mod test;
pub mod tools;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::config::Config;

/// Everything the other commands need: packages, the tools, ptxas.
pub fn prepare(root: &Path, config: &Config) -> Result<tools::Tools> {
    setup::setup(config)?;
    let tools = tools::build(root)?;
    setup::setup_ptxas(config, &tools)?;
    Ok(tools)
}

/// The repository root: x.py sets the working folder to it.
pub fn repo_root() -> Result<PathBuf> {
    let dir = std::env::current_dir()?;
    if !dir.join("x.py").is_file() {
        bail!("run through ./x.py from the repository root");
    }
    Ok(dir)
}
