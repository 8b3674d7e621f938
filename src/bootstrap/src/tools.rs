//! `x.py build`: the project's tools.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;

use crate::shell;

/// The tools every other command uses, built in the workspace's debug profile.
pub(crate) struct Tools {
    pub(crate) cargo_offload: PathBuf,
    pub(crate) compiletest: PathBuf,
}

pub(crate) fn build(root: &Path) -> Result<Tools> {
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
        ]),
    )?;
    let bin = root.join("target/debug");
    Ok(Tools { cargo_offload: bin.join("cargo-offload"), compiletest: bin.join("compiletest") })
}

/// Whether cargo is on PATH (a GPU machine may have none: it runs what was built elsewhere).
pub(crate) fn have_cargo() -> bool {
    shell::runner()
        .capture(Command::new("cargo").arg("--version"))
        .is_ok_and(|o| o.status.success())
}
