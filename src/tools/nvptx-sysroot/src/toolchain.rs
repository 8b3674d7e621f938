//! What a rustc toolchain is (version, sysroot) and which sysroot sources it holds.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::shell::Shell;

/// The target this crate builds a sysroot for.
pub(crate) const TARGET: &str = "nvptx64-nvidia-cuda";

/// One rustc and the sysroot it runs from.
pub(crate) struct Toolchain {
    pub(crate) rustc: PathBuf,
    pub(crate) sysroot: PathBuf,
    /// `rustc -vV` in full.
    pub(crate) verbose_version: String,
    /// The `release:` line of `rustc -vV`, e.g. `1.97.0-nightly`.
    pub(crate) release: String,
    /// The `commit-hash:` line of `rustc -vV`; `None` for a locally built rustc.
    pub(crate) commit_hash: Option<String>,
}

impl Toolchain {
    pub(crate) fn query(rustc: &Path, shell: &Shell) -> Result<Self> {
        let version = stdout(shell, Command::new(rustc).arg("-vV"))?;
        let sysroot = stdout(shell, Command::new(rustc).args(["--print", "sysroot"]))?;
        let field = |name: &str| {
            version.lines().find_map(|line| line.strip_prefix(name)).map(|v| v.trim().to_owned())
        };
        let release = field("release:")
            .with_context(|| format!("no `release:` in `rustc -vV`:\n{version}"))?;
        let commit_hash = field("commit-hash:").filter(|hash| hash != "unknown");
        Ok(Self {
            rustc: rustc.to_owned(),
            sysroot: PathBuf::from(sysroot.trim()),
            release,
            commit_hash,
            verbose_version: version,
        })
    }

    /// Whether `-Z` flags work: a nightly or a locally built (`-dev`) rustc.
    pub(crate) fn is_nightly(&self) -> bool {
        self.release.contains("nightly") || self.release.contains("dev")
    }

    /// The installed nvptx64 standard library (`rustup target add nvptx64-nvidia-cuda`).
    pub(crate) fn nvptx_std(&self) -> Option<PathBuf> {
        Some(self.sysroot.join("lib/rustlib").join(TARGET).join("lib")).filter(|dir| dir.is_dir())
    }

    /// The `library` folder of the rust-src component.
    pub(crate) fn rust_src(&self) -> Option<PathBuf> {
        Some(self.sysroot.join("lib/rustlib/src/rust/library"))
            .filter(|library| library.join("core/src/lib.rs").is_file())
    }

    /// The rustdoc source pages of the rust-docs component (`<crate>/**/*.rs.html`).
    pub(crate) fn rustdoc_sources(&self) -> Option<PathBuf> {
        Some(self.sysroot.join("share/doc/rust/html/src"))
            .filter(|pages| pages.join("core/lib.rs.html").is_file())
    }

    /// The cargo of the same toolchain, else the one on `PATH`.
    pub(crate) fn cargo(&self) -> PathBuf {
        let sibling = self.rustc.with_file_name(format!("cargo{}", std::env::consts::EXE_SUFFIX));
        if sibling.is_file() { sibling } else { PathBuf::from("cargo") }
    }
}

fn stdout(shell: &Shell, cmd: &mut Command) -> Result<String> {
    let output = shell.run(cmd)?;
    String::from_utf8(output.stdout).context("rustc printed something that is not utf-8")
}
