//! CUDA 11.8's ptxas: where it is found, and how the project installs it (PyPI's
//! `nvidia-cuda-nvcc-cu11`, into the repository's own `.venv`).
//!
//! Only 11.8's cubins load: CUDA 13's ptxas writes a new ELF header (ABI version 8) that
//! libomptarget 19 rejects. 11.8 reads PTX ISA up to 7.8 and knows sm_90.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, anyhow, bail};

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

/// The venv the project owns, relative to the repository.
const VENV: &str = ".venv";

/// The ptxas to assemble with: `explicit` (`--ptxas`), else `$OFFLOAD_PTXAS`, else the one in
/// `<repo>/.venv` (see [`install_ptxas`]).
pub(crate) fn find_ptxas(explicit: Option<&Path>, repo: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        return existing(path, "--ptxas");
    }
    if let Some(path) = std::env::var_os(PTXAS_ENV).filter(|p| !p.is_empty()) {
        return existing(Path::new(&path), PTXAS_ENV);
    }
    repo.and_then(venv_ptxas).ok_or_else(|| {
        anyhow!("ptxas 11.8 not found (run ./x.py setup, which installs {PTXAS_PACKAGE} into .venv, or pass --ptxas)")
    })
}

/// Installs ptxas 11.8 into `<repo>/.venv` (creating the venv first) unless it is there
/// already, checks its version, and returns its path.
pub(crate) fn install_ptxas(repo: &Path, runner: &Runner) -> Result<PathBuf> {
    if let Some(ptxas) = venv_ptxas(repo)
        && check_version(&ptxas, runner).is_ok()
    {
        return Ok(ptxas);
    }
    let venv = repo.join(VENV);
    let python = venv.join("bin").join("python");
    if !python.is_file() {
        let create = Cmd::new("python3").args(["-m", "venv"]).arg(&venv);
        runner.run(
            "creating the python venv (python3 -m venv: on Debian, apt-get install python3-venv)",
            &create,
        )?;
    }
    let quiet = if runner.verbose { None } else { Some("--quiet") };
    let pip = Cmd::new(&python)
        .args(["-m", "pip", "install", "--disable-pip-version-check"])
        .args(quiet)
        .arg(PTXAS_PACKAGE);
    runner.run(&format!("installing {PTXAS_PACKAGE} into {}", venv.display()), &pip)?;
    if runner.dry_run {
        return Ok(venv_ptxas(repo)
            .unwrap_or_else(|| venv.join("lib/<python>/site-packages").join(WHEEL_PTXAS)));
    }
    let ptxas = venv_ptxas(repo).ok_or_else(|| {
        anyhow!("pip installed {PTXAS_PACKAGE}, but {}/lib/python*/site-packages/{WHEEL_PTXAS} is missing", venv.display())
    })?;
    check_version(&ptxas, runner)?;
    Ok(ptxas)
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
        bail!(
            "{} is not ptxas 11.8 ({version}); reinstall with: pip install {PTXAS_PACKAGE}",
            ptxas.display()
        );
    }
    Ok(())
}

/// `<repo>/.venv/lib/python*/site-packages/nvidia/cuda_nvcc/bin/ptxas`, if installed.
fn venv_ptxas(repo: &Path) -> Option<PathBuf> {
    let lib = repo.join(VENV).join("lib");
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
        let repo = tempfile::tempdir().unwrap();
        assert!(venv_ptxas(repo.path()).is_none());
        let bin = repo.path().join(".venv/lib/python3.11/site-packages/nvidia/cuda_nvcc/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("ptxas"), "").unwrap();
        assert_eq!(venv_ptxas(repo.path()), Some(bin.join("ptxas")));
        assert_eq!(find_ptxas(Some(&bin.join("ptxas")), None).unwrap(), bin.join("ptxas"));
        let missing = find_ptxas(Some(&repo.path().join("nope")), Some(repo.path())).unwrap_err();
        assert!(missing.to_string().contains("--ptxas"), "{missing}");
    }
}
