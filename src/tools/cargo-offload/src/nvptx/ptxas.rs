//! CUDA 11.8's ptxas: where it is found, and how the tool installs it (PyPI's
//! `nvidia-cuda-nvcc-cu11`, into a Python venv in its own folder, `<OFFLOAD_HOME>/ptxas`).
//!
//! Only 11.8's cubins load: CUDA 13's ptxas writes a new ELF header (ABI version 8) that
//! libomptarget 19 rejects. 11.8 reads PTX ISA up to 7.8 and knows sm_90.
//!
//! The install is built in a staging folder beside its place and renamed into it, under a lock:
//! a killed install leaves no half venv, two builds at once install it once, and one that does
//! not run (`ptxas --version`) is installed again.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, anyhow, bail};

use crate::command::{Cmd, Runner};

/// The PyPI package holding ptxas 11.8 (`nvidia/cuda_nvcc/bin/ptxas`), pinned.
pub(crate) const PTXAS_PACKAGE: &str = "nvidia-cuda-nvcc-cu11==11.8.89";

/// The newest PTX ISA ptxas 11.8 reads.
pub(crate) const MAX_PTX_ISA: (u32, u32) = (7, 8);

/// An explicit ptxas, after `--ptxas`.
const PTXAS_ENV: &str = "OFFLOAD_PTXAS";

/// What `ptxas --version` says of 11.8: `Cuda compilation tools, release 11.8, V11.8.89`.
const RELEASE_11_8: &str = "release 11.8,";

/// The wheel's ptxas, relative to a venv's `site-packages`.
const WHEEL_PTXAS: &str = "nvidia/cuda_nvcc/bin/ptxas";

/// The file remembering a failed install (its error), beside the install.
const FAILED: &str = "ptxas.failed";

/// How long `--devices auto` leaves a failed install before trying again.
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(60 * 60);

/// Name prefix of the folders an install is staged in.
const STAGING_PREFIX: &str = ".staging-ptxas-";

/// The ptxas to assemble with: `explicit` (`--ptxas`), else `$OFFLOAD_PTXAS`, else the tool's
/// own (see [`install_ptxas`]).
pub(crate) fn find_ptxas(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = given(explicit)? {
        return Ok(path);
    }
    let dir = offload_support::home::ptxas_dir()?;
    venv_ptxas(&dir).ok_or_else(|| {
        anyhow!(
            "ptxas 11.8 is not installed in {} (cargo offload setup installs it, as the first \
             build of an NVIDIA image does; or pass --ptxas)",
            dir.display()
        )
    })
}

/// As [`find_ptxas`], installing the tool's own first where it is missing or does not run.
pub(crate) fn ensure_ptxas(explicit: Option<&Path>, runner: &Runner) -> Result<PathBuf> {
    ensure(explicit, runner, false)
}

/// As [`ensure_ptxas`], for `--devices auto`: where an install failed within the last hour (a
/// machine without the network), says so rather than trying again at every build.
pub(crate) fn ensure_ptxas_if_installable(
    explicit: Option<&Path>,
    runner: &Runner,
) -> Result<PathBuf> {
    ensure(explicit, runner, true)
}

/// The given ptxas, else the tool's own where it runs, else a new install (unless one failed
/// within the last hour and `wait_out_failures`).
fn ensure(explicit: Option<&Path>, runner: &Runner, wait_out_failures: bool) -> Result<PathBuf> {
    if let Some(path) = given(explicit)? {
        return Ok(path);
    }
    if let Ok(ptxas) = find_ptxas(None)
        && check_version(&ptxas, runner).is_ok()
    {
        return Ok(ptxas);
    }
    if wait_out_failures {
        let failed = offload_support::home::dir()?.join(FAILED);
        let recent = std::fs::metadata(&failed)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < RETRY_AFTER);
        if recent {
            let why = std::fs::read_to_string(&failed).unwrap_or_default();
            bail!(
                "installing ptxas failed less than an hour ago ({}); `cargo offload setup` tries \
                 again at once",
                why.trim()
            );
        }
    }
    install_ptxas(runner)
}

/// `--ptxas`, else `$OFFLOAD_PTXAS`, if either is given: it must exist.
fn given(explicit: Option<&Path>) -> Result<Option<PathBuf>> {
    if let Some(path) = explicit {
        return existing(path, "--ptxas").map(Some);
    }
    match std::env::var_os(PTXAS_ENV).filter(|p| !p.is_empty()) {
        Some(path) => existing(Path::new(&path), PTXAS_ENV).map(Some),
        None => Ok(None),
    }
}

/// Installs ptxas 11.8 into `<OFFLOAD_HOME>/ptxas` unless a working one is there, and returns
/// its path. A failure is remembered for [`ensure_ptxas_if_installable`].
pub(crate) fn install_ptxas(runner: &Runner) -> Result<PathBuf> {
    let failed = offload_support::home::dir()?.join(FAILED);
    match install(runner) {
        Ok(ptxas) => {
            let _ = std::fs::remove_file(&failed);
            Ok(ptxas)
        }
        Err(e) => {
            let _ = std::fs::write(&failed, format!("{e:#}"));
            Err(e)
        }
    }
}

fn install(runner: &Runner) -> Result<PathBuf> {
    let dir = offload_support::home::ptxas_dir()?;
    let home = dir.parent().unwrap_or(&dir).to_path_buf();
    std::fs::create_dir_all(&home).with_context(|| format!("creating {}", home.display()))?;
    let lock = File::create(home.join("ptxas.lock"))
        .with_context(|| format!("creating {}", home.join("ptxas.lock").display()))?;
    lock.lock().with_context(|| format!("locking {}", home.join("ptxas.lock").display()))?;
    // Another build may have installed it while this one waited.
    if let Some(ptxas) = venv_ptxas(&dir) {
        match check_version(&ptxas, runner) {
            Ok(()) => return Ok(ptxas),
            Err(e) => eprintln!("offload: {e:#}: installing ptxas again"),
        }
    }
    remove_leftovers(&home);
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(&home)
        .with_context(|| format!("creating a staging folder in {}", home.display()))?;
    eprintln!(
        "offload: installing ptxas 11.8 ({PTXAS_PACKAGE}, from PyPI) into {}, once",
        dir.display()
    );
    let create = Cmd::new("python3").args(["-m", "venv"]).arg(staging.path());
    runner.run(
        "creating the python venv (python3 -m venv: on Debian, apt-get install python3-venv)",
        &create,
    )?;
    let quiet = if runner.verbose { None } else { Some("--quiet") };
    let pip = Cmd::new(staging.path().join("bin").join("python"))
        .args(["-m", "pip", "install", "--disable-pip-version-check"])
        .args(quiet)
        .arg(PTXAS_PACKAGE);
    runner.run(&format!("installing {PTXAS_PACKAGE} (pip)"), &pip)?;
    if runner.dry_run {
        return Ok(dir.join("lib/<python>/site-packages").join(WHEEL_PTXAS));
    }
    let staged = venv_ptxas(staging.path()).ok_or_else(|| {
        anyhow!(
            "pip installed {PTXAS_PACKAGE}, but lib/python*/site-packages/{WHEEL_PTXAS} is missing"
        )
    })?;
    check_version(&staged, runner)?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::rename(staging.path(), &dir)
        .with_context(|| format!("moving the new venv to {}", dir.display()))?;
    let _ = staging.keep();
    venv_ptxas(&dir).ok_or_else(|| anyhow!("{} lost its ptxas", dir.display()))
}

/// Staging folders that killed installs left (none is in use: the caller holds the lock).
fn remove_leftovers(home: &Path) {
    for entry in std::fs::read_dir(home).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(STAGING_PREFIX) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The release line of `ptxas --version`, e.g. `Cuda compilation tools, release 11.8, V11.8.89`.
pub(crate) fn ptxas_version(ptxas: &Path, runner: &Runner) -> Result<String> {
    let out = runner.queries().stdout(Command::new(ptxas).arg("--version"))?;
    out.lines()
        .find(|line| line.contains("release"))
        .map(|line| line.trim().to_owned())
        .ok_or_else(|| anyhow!("`{} --version` names no release:\n{out}", ptxas.display()))
}

fn check_version(ptxas: &Path, runner: &Runner) -> Result<()> {
    let version = ptxas_version(ptxas, runner)?;
    if !version.contains(RELEASE_11_8) {
        bail!("{} is not ptxas 11.8 ({version})", ptxas.display());
    }
    Ok(())
}

/// `<venv>/lib/python*/site-packages/nvidia/cuda_nvcc/bin/ptxas`, if installed.
fn venv_ptxas(venv: &Path) -> Option<PathBuf> {
    let lib = venv.join("lib");
    let mut pythons: Vec<PathBuf> = std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path())
        .collect();
    pythons.sort();
    pythons.into_iter().map(|p| p.join("site-packages").join(WHEEL_PTXAS)).find(|p| p.is_file())
}

fn existing(path: &Path, source: &str) -> Result<PathBuf> {
    if !path.is_file() {
        bail!("the ptxas given by {source} ({}) does not exist", path.display());
    }
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_venv_ptxas() {
        let venv = tempfile::tempdir().unwrap();
        assert!(venv_ptxas(venv.path()).is_none());
        let bin = venv.path().join("lib/python3.11/site-packages/nvidia/cuda_nvcc/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("ptxas"), "").unwrap();
        assert_eq!(venv_ptxas(venv.path()), Some(bin.join("ptxas")));
        assert_eq!(find_ptxas(Some(&bin.join("ptxas"))).unwrap(), bin.join("ptxas"));
        let missing = find_ptxas(Some(&venv.path().join("nope"))).unwrap_err();
        assert!(missing.to_string().contains("--ptxas"), "{missing}");
    }
}
