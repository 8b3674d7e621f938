//! What the tools ask of the Rust toolchain, each question asked one way, and where FileCheck
//! is. (Build scripts ask rustc for its sysroot on their own: they run before this crate is
//! built for them.)

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, bail};

use crate::command::Runner;

/// Where Debian's `llvm-19-tools` puts FileCheck.
const DEFAULT_FILECHECK: &str = "/usr/lib/llvm-19/bin/FileCheck";
/// Names another FileCheck than [`DEFAULT_FILECHECK`].
const FILECHECK_VAR: &str = "OFFLOAD_FILECHECK";

/// The sysroot of `rustc` (`rustc --print sysroot`), asked in `dir` where given: a
/// `rust-toolchain.toml` there picks rustup's toolchain where `rustc` is rustup's proxy.
pub fn sysroot(runner: &Runner, rustc: &Path, dir: Option<&Path>) -> Result<PathBuf> {
    let mut cmd = Command::new(rustc);
    cmd.args(["--print", "sysroot"]);
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    Ok(PathBuf::from(runner.stdout(&mut cmd)?.trim()))
}

/// The compiler of the toolchain at `sysroot` (not rustup's proxy).
pub fn rustc_in(sysroot: &Path) -> PathBuf {
    sysroot.join("bin").join(format!("rustc{}", std::env::consts::EXE_SUFFIX))
}

/// What `rustc -V` says: `rustc 1.95.0-nightly (59807616e 2026-04-14)`.
pub fn version(runner: &Runner, rustc: &Path) -> Result<String> {
    Ok(runner.stdout(Command::new(rustc).arg("-V"))?.trim().to_owned())
}

/// `rustc -vV` in full: the version, with its `release:` and `commit-hash:` lines.
pub fn verbose_version(runner: &Runner, rustc: &Path) -> Result<String> {
    runner.stdout(Command::new(rustc).arg("-vV"))
}

/// The rustc rustup runs (`rustup which rustc`): in `dir` where given (so that a
/// `rust-toolchain.toml` there counts), of `toolchain` (`nightly`) where given.
pub fn rustup_rustc(
    runner: &Runner,
    dir: Option<&Path>,
    toolchain: Option<&str>,
) -> Result<PathBuf> {
    let mut cmd = Command::new("rustup");
    cmd.args(["which", "rustc"]);
    if let Some(toolchain) = toolchain {
        cmd.args(["--toolchain", toolchain]);
    }
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    Ok(PathBuf::from(runner.stdout(&mut cmd)?.trim()))
}

/// Where rustup's `rust-src` puts the standard library's crates (`core`, `alloc`, `std`, ...)
/// in the toolchain at `sysroot`.
pub fn rust_src_library(sysroot: &Path) -> PathBuf {
    sysroot.join("lib/rustlib/src/rust/library")
}

/// Whether the toolchain at `sysroot` has the standard library's sources (rustup's `rust-src`):
/// the nvptx64 sysroot is built from `core`'s, the tsan suite rebuilds `std` from its own.
pub fn has_rust_src(sysroot: &Path) -> bool {
    let library = rust_src_library(sysroot);
    ["core", "std"].iter().all(|krate| library.join(krate).join("src/lib.rs").is_file())
}

/// FileCheck: `$OFFLOAD_FILECHECK`, or Debian's LLVM 19 one.
pub fn filecheck() -> Result<PathBuf> {
    let path = std::env::var_os(FILECHECK_VAR)
        .map_or_else(|| PathBuf::from(DEFAULT_FILECHECK), PathBuf::from);
    if !path.is_file() {
        bail!(
            "FileCheck not found (apt-get install llvm-19-tools): there is no {} (set {FILECHECK_VAR} to use \
             another)",
            path.display()
        );
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sysroot_is_rustcs_answer() {
        let dir = tempfile::tempdir().unwrap();
        let rustc = dir.path().join("rustc");
        std::fs::write(
            &rustc,
            "#!/bin/sh\n[ \"$*\" = '--print sysroot' ] && echo /opt/toolchain\n",
        )
        .unwrap();
        let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&rustc, executable).unwrap();
        let runner = Runner::default();
        assert_eq!(sysroot(&runner, &rustc, None).unwrap(), Path::new("/opt/toolchain"));
        assert_eq!(rustc_in(Path::new("/opt/toolchain")), Path::new("/opt/toolchain/bin/rustc"));
        let e = version(&runner, &rustc).unwrap_err().to_string();
        assert!(e.starts_with(&format!("`{} -V` failed", rustc.display())), "{e}");
    }

    #[test]
    fn rust_src_is_the_sources_of_core_and_std() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_rust_src(dir.path()));
        for krate in ["core", "std"] {
            let src = dir.path().join("lib/rustlib/src/rust/library").join(krate).join("src");
            std::fs::create_dir_all(&src).unwrap();
            std::fs::write(src.join("lib.rs"), "").unwrap();
        }
        assert!(has_rust_src(dir.path()));
    }
}
