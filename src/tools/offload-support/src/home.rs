//! The folder where `cargo offload` keeps what it fetches or builds once per machine (CUDA
//! 11.8's ptxas, the nvptx sysroots), owned by the installed tool rather than by a checkout:
//! `OFFLOAD_HOME`, else `$XDG_CACHE_HOME/offload`, else `~/.cache/offload`.

use std::path::PathBuf;

use anyhow::{Result, bail};

/// Names the folder, above the defaults.
pub const ENV: &str = "OFFLOAD_HOME";

/// The folder (not created here).
pub fn dir() -> Result<PathBuf> {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(home) = set(ENV) {
        return Ok(home);
    }
    if let Some(cache) = set("XDG_CACHE_HOME") {
        return Ok(cache.join("offload"));
    }
    match set("HOME") {
        Some(home) => Ok(home.join(".cache").join("offload")),
        None => bail!("neither {ENV}, XDG_CACHE_HOME nor HOME is set: set {ENV} to a folder"),
    }
}

/// Where ptxas is installed: a Python venv holding PyPI's `nvidia-cuda-nvcc-cu11`.
pub fn ptxas_dir() -> Result<PathBuf> {
    Ok(dir()?.join("ptxas"))
}

/// Where the nvptx sysroots are cached, one per toolchain and GPU architecture.
pub fn sysroot_dir() -> Result<PathBuf> {
    Ok(dir()?.join("nvptx-sysroot"))
}
