//! The anchors: CUDA by hand (`bench_cuda.cu`, compiled with nvcc on the GPU machine) and clang's
//! OpenMP offload (`bench.c`, compiled here with clang-19 and CUDA 11.8's nvlink, which
//! `anchor_clang` fetches) for saxpy; `workloads.cu` and `workloads_f64.cu` (CUDA by hand, CUB
//! and cuBLAS, in f32 and f64) and `matrix.cu` (WMMA by hand, cuBLAS on the tensor cores),
//! compiled with nvcc there, for the kernel workloads.
//!
//! Their sources are not ours: they stay in `shared/anchors` beside the repository and the bundle
//! copies them into `anchors/`, where the binaries are built too. An anchor that cannot be built
//! is reported with the reason, and its columns read n/a.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result};

use offload_bootstrap::config::Config;
use offload_bootstrap::shell;

/// The anchors' folder inside a bundle.
pub(crate) const DIR: &str = "anchors";
const SOURCES: [&str; 5] =
    [CUDA_SOURCE, CLANG_SOURCE, WORKLOADS_SOURCE, WORKLOADS_F64_SOURCE, MATRIX_SOURCE];
const CUDA_SOURCE: &str = "bench_cuda.cu";
const CUDA_BINARY: &str = "bench_cuda";
const CLANG_SOURCE: &str = "bench.c";
/// The kernel workloads' anchor (CUDA by hand, CUB, cuBLAS), built by workloads.rs.
pub(crate) const WORKLOADS_SOURCE: &str = "workloads.cu";
/// The kernel workloads in f64 (CUDA by hand, CUB, cuBLAS DGEMM).
pub(crate) const WORKLOADS_F64_SOURCE: &str = "workloads_f64.cu";
/// The tensor-core workloads' anchor (WMMA by hand, cuBLAS in bf16, f16, TF32, f32, f64).
pub(crate) const MATRIX_SOURCE: &str = "matrix.cu";
const CLANG_BINARY: &str = "bench_omp";
/// Beside the clang binary's place in a bundle: why it is not there.
const CLANG_NOT_BUILT: &str = "bench_omp.not-built";

/// An anchor program, or why there is none.
#[derive(Debug, Clone)]
pub(crate) enum Anchor {
    Built(PathBuf),
    NotBuilt(String),
}

impl Anchor {
    pub(crate) fn describe(&self) -> String {
        match self {
            Anchor::Built(path) => format!("built ({})", path.display()),
            Anchor::NotBuilt(reason) => format!("not built: {reason}"),
        }
    }
}

/// `<repo>/../shared/anchors`, where the anchors' sources live.
pub(crate) fn sources(root: &Path) -> PathBuf {
    root.parent().unwrap_or(root).join("shared/anchors")
}

/// Copies the sources into a bundle's `anchors/` and builds the clang anchor there if it can,
/// leaving the reason in `bench_omp.not-built` if not. Returns what became of the clang anchor.
pub(crate) fn add_to_bundle(root: &Path, dir: &Path) -> Result<Anchor> {
    let from = sources(root);
    std::fs::create_dir_all(dir)?;
    for name in SOURCES {
        let source = from.join(name);
        std::fs::copy(&source, dir.join(name))
            .with_context(|| format!("copying {}", source.display()))?;
    }
    let binary = dir.join(CLANG_BINARY);
    match crate::anchor_clang::build_clang_anchor(root, &dir.join(CLANG_SOURCE), &binary) {
        Ok(()) => Ok(Anchor::Built(binary)),
        Err(reason) => {
            let reason = format!("{reason:#}");
            std::fs::write(dir.join(CLANG_NOT_BUILT), &reason)?;
            Ok(Anchor::NotBuilt(reason))
        }
    }
}

/// The clang anchor a bundle carries, or why it carries none.
pub(crate) fn clang(dir: &Path) -> Anchor {
    let binary = dir.join(CLANG_BINARY);
    if binary.is_file() {
        return Anchor::Built(binary);
    }
    match std::fs::read_to_string(dir.join(CLANG_NOT_BUILT)) {
        Ok(reason) => Anchor::NotBuilt(reason.trim().to_owned()),
        Err(_) => Anchor::NotBuilt(format!(
            "not in {} (make the bundle again with ./x.py bench)",
            dir.display()
        )),
    }
}

/// Builds saxpy's CUDA anchor with nvcc, on the GPU machine; without nvcc, or if nvcc fails, the
/// anchor is reported as not built.
pub(crate) fn build_cuda(config: &Config, dir: &Path) -> Anchor {
    build_with_nvcc(config, dir, CUDA_SOURCE, CUDA_BINARY, &[])
}

/// Builds `dir/source` into `dir/binary` with nvcc (`-O3`, the GPU of the config, then `libs`).
pub(crate) fn build_with_nvcc(
    config: &Config,
    dir: &Path,
    source: &str,
    binary: &str,
    libs: &[&str],
) -> Anchor {
    let source = dir.join(source);
    if !source.is_file() {
        return Anchor::NotBuilt(format!(
            "no {} (the bundle copies it from shared/anchors)",
            source.display()
        ));
    }
    let Some(nvcc) = find_program("nvcc", &["/usr/local/cuda/bin/nvcc"]) else {
        return Anchor::NotBuilt("no nvcc (neither on PATH nor in /usr/local/cuda/bin)".into());
    };
    let binary = dir.join(binary);
    eprintln!("x: bench: building {} with {}", source.display(), nvcc.display());
    let out = shell::runner().capture(
        Command::new(&nvcc)
            .arg("-O3")
            .arg(format!("-arch={}", config.nvptx.target_cpu))
            .arg(&source)
            .args(libs)
            .arg("-o")
            .arg(&binary),
    );
    match out {
        Ok(out) if out.status.success() => Anchor::Built(binary),
        Ok(out) => Anchor::NotBuilt(format!("nvcc failed ({}): {}", out.status, tail(&out.stderr))),
        Err(e) => Anchor::NotBuilt(format!("{e:#}")),
    }
}

/// `name` on PATH, or the first of `fallbacks` that exists.
pub(crate) fn find_program(name: &str, fallbacks: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .chain(fallbacks.iter().map(PathBuf::from))
        .find(|candidate| candidate.is_file())
}

/// The last lines of a program's error output, for a one-line reason.
pub(crate) fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}
