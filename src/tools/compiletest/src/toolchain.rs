//! What the tests are compiled with: rustc and the `offload` and `offload_blas` rlibs
//! (FileCheck, which checks them, is `offload_support::toolchain`'s).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context as _, Result, bail};

/// Sysroot of the rustc that built this runner (and the `offload` rlib next to it).
const SYSROOT: &str = env!("OFFLOAD_COMPILETEST_SYSROOT");

pub(crate) struct Toolchain {
    /// The rustc of [`SYSROOT`]: an rlib can only be used by the compiler that wrote it.
    pub(crate) rustc: PathBuf,
    /// `target/<profile>`, the folder of this runner.
    pub(crate) profile_dir: PathBuf,
    /// `target/<profile>/deps`: the `offload` rlib's own dependencies (its proc-macro).
    pub(crate) deps: PathBuf,
    /// The `liboffload-<hash>.rlib` cargo built for this runner, passed as `--extern offload`.
    pub(crate) offload_rlib: PathBuf,
    /// The `liboffload_blas-<hash>.rlib`, passed as `--extern offload_blas`.
    pub(crate) blas_rlib: PathBuf,
}

impl Toolchain {
    pub(crate) fn locate() -> Result<Toolchain> {
        let rustc = rustc()?;
        let exe = std::env::current_exe().context("locating the runner's executable")?;
        let mut profile_dir =
            exe.parent().context("the runner's executable has no folder")?.to_path_buf();
        // `cargo test` runs the runner's own tests from `target/<profile>/deps`.
        if profile_dir.ends_with("deps") {
            profile_dir.pop();
        }
        let deps = profile_dir.join("deps");
        let offload_rlib = newest_rlib(&deps, "offload")?;
        let blas_rlib = newest_rlib(&deps, "offload_blas")?;
        Ok(Toolchain { rustc, profile_dir, deps, offload_rlib, blas_rlib })
    }
}

/// The rustc of [`SYSROOT`].
pub(crate) fn rustc() -> Result<PathBuf> {
    let rustc = offload_support::toolchain::rustc_in(Path::new(SYSROOT));
    if !rustc.is_file() {
        bail!(
            "the rustc that built this runner is gone ({}): rebuild the runner with cargo",
            rustc.display()
        );
    }
    Ok(rustc)
}

/// The most recently written `lib<name>-<hash>.rlib` of `deps`: the one cargo built for this
/// runner, where other builds (other profiles of the dependency graph) left older ones.
fn newest_rlib(deps: &Path, name: &str) -> Result<PathBuf> {
    let prefix = format!("lib{name}-");
    let mut newest: Option<(SystemTime, PathBuf)> = None;
    let entries = std::fs::read_dir(deps).with_context(|| format!("reading {}", deps.display()))?;
    for entry in entries {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else { continue };
        if !(file_name.starts_with(&prefix) && file_name.ends_with(".rlib")) {
            continue;
        }
        let modified = entry.metadata()?.modified()?;
        if newest.as_ref().is_none_or(|(t, _)| modified > *t) {
            newest = Some((modified, entry.path()));
        }
    }
    match newest {
        Some((_, path)) => Ok(path),
        None => bail!(
            "no lib{name}-*.rlib in {}: build the runner with `cargo build -p offload-compiletest`",
            deps.display()
        ),
    }
}
