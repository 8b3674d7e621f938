//! `x.py setup`: what the build and the tests need, installed or named. Idempotent, and quiet
//! when everything is there.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use crate::config::Config;
use crate::shell;
use crate::tools::Tools;

/// Debian packages: the runtime, its headers and device bitcode, FileCheck, and Python's venv
/// (ptxas comes from PyPI into the project's `.venv`).
const PACKAGES: &[&str] = &["libomp5-19", "libomp-19-dev", "llvm-19-tools", "python3-venv"];

/// The Debian packages and the toolchain check (ptxas comes later, from a built tool).
pub(crate) fn setup(config: &Config) -> Result<()> {
    install_packages()?;
    check_toolchain()?;
    let runtime = config.runtime.dir.join("libomptarget.so.19.1");
    if !runtime.is_file() {
        bail!(
            "{} is missing after setup (set [runtime] dir in config.toml to the folder that holds it)",
            runtime.display()
        );
    }
    Ok(())
}

fn install_packages() -> Result<()> {
    let missing: Vec<&str> = PACKAGES.iter().copied().filter(|p| !package_installed(p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let line = format!("apt-get install -y {}", missing.join(" "));
    if !is_root() {
        bail!("missing Debian packages {} (run as root: {line})", missing.join(", "));
    }
    eprintln!("x: installing {}", missing.join(" "));
    shell::run("apt-get update", Command::new("apt-get").args(["update", "-qq"]))?;
    shell::run(
        &line,
        Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

/// Whether Debian's package `name` is installed.
pub(crate) fn package_installed(name: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", name])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

/// Whether this process runs as root (and so may install packages).
pub(crate) fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// The lowering links against the libLLVM of the rustc that builds it; that library must be
/// there (it is in every rustup toolchain).
fn check_toolchain() -> Result<()> {
    let out = shell::capture("rustc", Command::new("rustc").args(["--print", "sysroot"]))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let lib = sysroot.join("lib");
    let has_llvm = std::fs::read_dir(&lib)
        .with_context(|| format!("reading {}", lib.display()))?
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy().starts_with("libLLVM"));
    if !has_llvm {
        bail!(
            "the toolchain at {} ships no libLLVM (use a rustup toolchain: rustup toolchain install nightly)",
            sysroot.display()
        );
    }
    Ok(())
}

/// CUDA 11.8's ptxas for the NVIDIA image, installed into `.venv` by `cargo offload setup`
/// (unless config.toml names one).
pub(crate) fn setup_ptxas(root: &Path, config: &Config, tools: &Tools) -> Result<()> {
    if config.nvptx.ptxas.is_some() {
        return Ok(());
    }
    shell::run(
        "cargo offload setup",
        Command::new(&tools.cargo_offload).arg("setup").arg("--root").arg(root),
    )
}
