//! `x.py install [--root DIR] [--debug]`: `cargo offload` for packages anywhere: the
//! cargo-offload package, whose two binaries (cargo-offload and offload-ld, which it finds
//! beside itself) `cargo install` puts into `DIR/bin` (cargo's default root: `~/.cargo/bin`).
//! What the tool needs besides (ptxas, the nvptx sysroot) it keeps in its own cache folder.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

use crate::shell;

/// The package installed: cargo-offload and offload-ld.
const TOOL: &str = "src/tools/cargo-offload";

/// Where, and how.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Options {
    pub root: Option<PathBuf>,
    /// Build the tools in the debug profile (faster to build; the tests install so).
    pub debug: bool,
}

/// Installs the tools; returns the folder of their binaries.
pub fn install(root: &Path, options: &Options) -> Result<PathBuf> {
    {
        let package = TOOL;
        let mut cmd = Command::new("cargo");
        cmd.current_dir(root).args(["install", "--quiet", "--locked", "--path", package]);
        if let Some(dir) = &options.root {
            cmd.arg("--root").arg(dir);
        }
        if options.debug {
            // The workspace's own debug build: nothing is compiled twice.
            cmd.arg("--debug").arg("--target-dir").arg(root.join("target"));
        }
        shell::runner().run(&format!("cargo install --path {package}"), &mut cmd)?;
    }
    let bin = match &options.root {
        Some(dir) => dir.join("bin"),
        None => home_cargo_bin()?,
    };
    println!(
        "install: cargo-offload and offload-ld in {} (make a package: cargo offload new NAME; check this machine: cargo offload doctor)",
        bin.display()
    );
    Ok(bin)
}

/// Where `cargo install` puts binaries without `--root`.
fn home_cargo_bin() -> Result<PathBuf> {
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        return Ok(PathBuf::from(home).join("bin"));
    }
    match std::env::var_os("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".cargo/bin")),
        None => bail!("neither CARGO_HOME nor HOME is set: pass --root"),
    }
}
