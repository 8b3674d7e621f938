//! `x.py install [--root DIR] [--debug]`: `cargo offload` for packages anywhere: cargo-offload
//! and offload-ld (which it finds beside itself) installed by `cargo install` into `DIR/bin`
//! (cargo's default root: `~/.cargo/bin`), after what every build needs (setup, ptxas in this
//! repository's `.venv`). A package made by `cargo offload new` depends on this repository's
//! `library/offload`, through which the tools find ptxas and the nvptx sysroot cache here.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

use crate::shell;

/// The packages installed, each with its binary.
const TOOLS: [&str; 2] = ["src/tools/cargo-offload", "src/tools/offload-ld"];

/// The command line.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Options {
    pub(crate) root: Option<PathBuf>,
    /// Build the tools in the debug profile (faster to build; the tests install so).
    pub(crate) debug: bool,
}

impl Options {
    pub(crate) fn parse(args: &[String]) -> Result<Options> {
        let mut options = Options::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--root" => match args.next() {
                    Some(dir) => options.root = Some(PathBuf::from(dir)),
                    None => bail!("--root needs a folder (./x.py install [--root DIR] [--debug])"),
                },
                "--debug" => options.debug = true,
                other => {
                    bail!("unknown argument `{other}` (./x.py install [--root DIR] [--debug])")
                }
            }
        }
        Ok(options)
    }
}

/// Installs the tools; returns the folder of their binaries.
pub(crate) fn install(root: &Path, options: &Options) -> Result<PathBuf> {
    for package in TOOLS {
        let mut cmd = Command::new("cargo");
        cmd.current_dir(root).args(["install", "--quiet", "--locked", "--path", package]);
        if let Some(dir) = &options.root {
            cmd.arg("--root").arg(dir);
        }
        if options.debug {
            // The workspace's own debug build: nothing is compiled twice.
            cmd.arg("--debug").arg("--target-dir").arg(root.join("target"));
        }
        shell::run(&format!("cargo install --path {package}"), &mut cmd)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let args = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(Options::parse(&[]).unwrap(), Options::default());
        assert_eq!(
            Options::parse(&args("--root /tmp/x --debug")).unwrap(),
            Options { root: Some("/tmp/x".into()), debug: true }
        );
        assert!(Options::parse(&args("--root")).is_err());
        assert!(
            Options::parse(&args("--fast")).unwrap_err().to_string().contains("unknown argument")
        );
    }
}
