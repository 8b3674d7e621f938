//! A Rust sysroot for `nvptx64-nvidia-cuda` (core, alloc and compiler_builtins rlibs with
//! embedded bitcode), so that `rustc +nightly --target nvptx64-nvidia-cuda --sysroot <it>`
//! compiles `#![no_std]` kernel crates.
//!
//! [`ensure`] takes the first of these that the toolchain allows:
//! 1. its own nvptx64 standard library (`rustup target add nvptx64-nvidia-cuda`);
//! 2. core and alloc built from its rust-src component;
//! 3. core and alloc built from sources rebuilt out of its rust-docs component's rustdoc
//!    source pages (see [`reconstruct_sources`]), the offline fallback.
//!
//! Ways 2 and 3 also build compiler_builtins from crates.io, and cache the result per
//! toolchain and target CPU under [`Config::cache_dir`].

mod builtins;
mod cache;
mod compile;
mod reconstruct;
mod rustdoc_page;
mod shell;
mod toolchain;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::cache::Entry;
use crate::compile::{Crate, SysrootBuilder};
use crate::shell::Shell;
use crate::toolchain::Toolchain;

/// The target CPU sysroots are built for unless told otherwise.
pub const DEFAULT_TARGET_CPU: &str = "sm_90";

/// How to find or build the sysroot.
#[derive(Clone, Debug)]
pub struct Config {
    /// The nightly rustc binary to use (e.g. from `rustup which rustc --toolchain nightly`).
    pub rustc: PathBuf,
    /// Where built sysroots are kept, one subfolder per toolchain and target CPU
    /// (e.g. `<repo>/build/nvptx-sysroot`).
    pub cache_dir: PathBuf,
    /// The `-Ctarget-cpu` the crates are built for, e.g. `sm_90`.
    pub target_cpu: String,
    /// Print each command run.
    pub verbose: bool,
}

impl Config {
    /// A quiet config for [`DEFAULT_TARGET_CPU`].
    pub fn new(rustc: impl Into<PathBuf>, cache_dir: impl Into<PathBuf>) -> Self {
        Self {
            rustc: rustc.into(),
            cache_dir: cache_dir.into(),
            target_cpu: DEFAULT_TARGET_CPU.to_owned(),
            verbose: false,
        }
    }
}

/// Returns the sysroot to pass as `--sysroot` for `nvptx64-nvidia-cuda`, building it on the
/// first call for a toolchain and target CPU (about 30 s) and reusing it afterwards.
pub fn ensure(cfg: &Config) -> Result<PathBuf> {
    let shell = Shell::new(cfg.verbose);
    let toolchain = Toolchain::query_cached(&cfg.rustc, &shell, &cfg.cache_dir)?;
    if toolchain.nvptx_std().is_some() {
        return Ok(toolchain.sysroot);
    }
    let entry = Entry::new(&cfg.cache_dir, &toolchain, &cfg.target_cpu)?;
    if entry.is_complete() {
        return Ok(entry.sysroot());
    }
    build(cfg, &toolchain, &entry, &shell)?;
    Ok(entry.sysroot())
}

/// Rebuilds the sources of core and alloc (with the stdarch and portable-simd files core
/// includes) from the rust-docs pages of `rustc`'s toolchain into `<dest>/library`, laid out
/// like rust-src's `library`; returns that folder. Every file is checked against its page's
/// line count; doc-only markdown files missing from the pages are written empty.
pub fn reconstruct_sources(rustc: &Path, dest: &Path) -> Result<PathBuf> {
    let toolchain = Toolchain::query(rustc, &Shell::new(false))?;
    let Some(pages) = toolchain.rustdoc_sources() else {
        bail!(
            "{} has no rust-docs source pages (run `rustup component add rust-docs --toolchain nightly`)",
            toolchain.sysroot.display()
        );
    };
    Ok(reconstruct::from_rustdoc(&pages, dest)?.library)
}

/// Where core and alloc sources come from.
enum LibrarySource {
    /// rust-src's `library` folder.
    RustSrc(PathBuf),
    /// rust-docs' source pages, `share/doc/rust/html/src`.
    RustdocPages(PathBuf),
}

/// Builds the entry in a staging folder and renames it into place.
fn build(cfg: &Config, toolchain: &Toolchain, entry: &Entry, shell: &Shell) -> Result<()> {
    let source = library_source(toolchain)?;
    let cpu = &cfg.target_cpu;
    let staging = entry.stage()?;
    let src = staging.path().join("src");

    let library = match source {
        LibrarySource::RustSrc(library) => library,
        LibrarySource::RustdocPages(pages) => {
            let rebuilt = shell
                .stage("rebuilding core and alloc sources from rust-docs", || {
                    reconstruct::from_rustdoc(&pages, &src)
                })?;
            shell.note(&format!(
                "rebuilt {} source files, wrote {} doc files empty",
                rebuilt.files,
                rebuilt.stubs.len()
            ));
            rebuilt.library
        }
    };
    let builtins_dir =
        shell.stage(&format!("fetching compiler_builtins {}", builtins::VERSION), || {
            let dir = builtins::fetch(toolchain, &src, shell)?;
            builtins::patch(&dir)?;
            Ok(dir)
        })?;

    let builder = SysrootBuilder {
        rustc: &toolchain.rustc,
        target_cpu: cpu,
        sysroot: staging.sysroot(),
        shell,
    };
    for krate in [Crate::core(&library), builtins::krate(&builtins_dir), Crate::alloc(&library)] {
        shell.stage(&format!("building {} for nvptx64 ({cpu})", krate.name), || {
            builder.build(&krate)
        })?;
    }
    staging.commit(entry)
}

/// The first source of core and alloc the toolchain has, or an error saying what to install.
fn library_source(toolchain: &Toolchain) -> Result<LibrarySource> {
    if !toolchain.is_nightly() {
        bail!(
            "{} is {}, not a nightly, and has no nvptx64 standard library (pass a nightly rustc, e.g. from `rustup which rustc --toolchain nightly`)",
            toolchain.rustc.display(),
            toolchain.release
        );
    }
    if let Some(library) = toolchain.rust_src() {
        Ok(LibrarySource::RustSrc(library))
    } else if let Some(pages) = toolchain.rustdoc_sources() {
        Ok(LibrarySource::RustdocPages(pages))
    } else {
        bail!(
            "the toolchain at {} has no nvptx64 standard library, no rust-src and no rust-docs to build one from (run `rustup component add rust-src --toolchain nightly`, or `rustup component add rust-docs --toolchain nightly` where rust-src is unavailable)",
            toolchain.sysroot.display()
        )
    }
}
