//! `x.py build`: the project's tools.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use crate::shell;

/// The tools every other command uses, built in the workspace's debug profile.
pub struct Tools {
    pub cargo_offload: PathBuf,
    pub compiletest: PathBuf,
}

pub fn build(root: &Path) -> Result<Tools> {
    shell::runner().run(
        "building the tools",
        Command::new("cargo").current_dir(root).args([
            "build",
            "--quiet",
            "-p",
            "cargo-offload",
            "-p",
            "offload-lower",
            "-p",
            "offload-compiletest",
            "-p",
            "offload-bench",
        ]),
    )?;
    Ok(built(root))
}

/// The tools [`build`] made, where it made them.
pub fn built(root: &Path) -> Tools {
    let bin = root.join("target/debug");
    Tools { cargo_offload: bin.join("cargo-offload"), compiletest: bin.join("compiletest") }
}

/// The benchmark harness (`x.py bench`), built with the tools or carried by a GPU bundle.
pub fn bench(root: &Path) -> Command {
    Command::new(root.join("target/debug/bench"))
}

/// Whether cargo is on PATH (a GPU machine may have none: it runs what was built elsewhere).
pub fn have_cargo() -> bool {
    shell::runner()
        .capture(Command::new("cargo").arg("--version"))
        .is_ok_and(|o| o.status.success())
}
