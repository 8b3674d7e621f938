//! `x.py setup`: what the build and the tests need, installed or named. Idempotent, and quiet
//! when everything is there.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};
use offload_support::toolchain;

use crate::config::Config;
use crate::shell;
use crate::tools::Tools;

/// Debian packages: the runtime, its headers and device bitcode, FileCheck, Python's venv
/// (ptxas comes from PyPI into cargo offload's own folder), and Open MPI with the libclang the
/// `mpi` crate's bindings are generated with (examples/jacobi_mpi).
const PACKAGES: &[&str] = &[
    "libomp5-19",
    "libomp-19-dev",
    "llvm-19-tools",
    "python3-venv",
    "openmpi-bin",
    "libopenmpi-dev",
    "libclang1-19",
    "libclang-common-19-dev",
];

/// The Debian packages and the toolchain with its components (ptxas comes later, from a built
/// tool).
pub fn setup(config: &Config) -> Result<()> {
    install_packages()?;
    let sysroot = check_toolchain()?;
    install_rust_src(&sysroot)?;
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
    shell::runner().run("apt-get update", Command::new("apt-get").args(["update", "-qq"]))?;
    shell::runner().run(
        &line,
        Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
}

/// Whether Debian's package `name` is installed.
pub fn package_installed(name: &str) -> bool {
    shell::runner()
        .capture(Command::new("dpkg-query").args(["-W", "-f=${Status}", name]))
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        .unwrap_or(false)
}

/// Whether this process runs as root (and so may install packages).
pub fn is_root() -> bool {
    shell::runner()
        .capture(Command::new("id").arg("-u"))
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// The lowering links against the libLLVM of the rustc that builds it; that library must be
/// there (it is in every rustup toolchain). Returns the toolchain's sysroot.
fn check_toolchain() -> Result<PathBuf> {
    let sysroot = toolchain::sysroot(&shell::runner(), Path::new("rustc"), None)?;
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
    Ok(sysroot)
}

/// The standard library's sources (rustup's `rust-src`, which rust-toolchain.toml lists but
/// rustup does not add to a toolchain already installed): the tsan suite rebuilds std from them.
fn install_rust_src(sysroot: &Path) -> Result<()> {
    if toolchain::has_rust_src(sysroot) {
        return Ok(());
    }
    let line = "rustup component add rust-src";
    if !shell::runner()
        .capture(Command::new("rustup").arg("--version"))
        .is_ok_and(|o| o.status.success())
    {
        bail!(
            "the toolchain at {} has no rust-src and there is no rustup to add it (install the \
             standard library's sources there, or use a rustup toolchain: {line})",
            sysroot.display()
        );
    }
    eprintln!("x: installing the toolchain's rust-src ({line})");
    shell::runner().run(line, Command::new("rustup").args(["component", "add", "rust-src"]))?;
    if !toolchain::has_rust_src(sysroot) {
        bail!("{line} ran, but {} still has no rust-src", sysroot.display());
    }
    Ok(())
}

/// CUDA 11.8's ptxas for the NVIDIA image, installed by `cargo offload setup` into the tool's
/// own folder (`OFFLOAD_HOME`, else `~/.cache/offload`)
/// (unless config.toml names one).
pub fn setup_ptxas(config: &Config, tools: &Tools) -> Result<()> {
    if config.nvptx.ptxas.is_some() {
        return Ok(());
    }
    shell::runner().run("cargo offload setup", Command::new(&tools.cargo_offload).arg("setup"))
}
