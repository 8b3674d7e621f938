//! A Rust sysroot for `nvptx64-nvidia-cuda` (core, alloc and compiler_builtins rlibs with
//! embedded bitcode), so that `rustc +nightly --target nvptx64-nvidia-cuda --sysroot <it>`
//! compiles `#![no_std]` kernel crates.
//!
//! [`ensure`] takes the first of these that the toolchain allows:
//! 1. its own nvptx64 standard library (`rustup target add nvptx64-nvidia-cuda`);
//! 2. core and alloc built from its rust-src component, with compiler_builtins from
//!    crates.io, cached per toolchain and target CPU under [`Config::cache_dir`].
//!
//! Without either it fails, naming the rustup command that adds rust-src: there is no offline
//! rebuild of the sources, as every supported setup has rust-src (`./x.py setup` installs it).

mod builtins;
mod cache;
mod compile;
mod shell;
mod toolchain;

use std::path::PathBuf;

use anyhow::{Result, bail};

use crate::cache::Entry;
pub use crate::cache::entry_name;
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
    /// (`cargo offload`'s: `<OFFLOAD_HOME>/nvptx-sysroot`).
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
        match entry.check_libraries() {
            Ok(()) => return Ok(entry.sysroot()),
            Err(why) => eprintln!(
                "offload: the nvptx sysroot in {} is damaged ({why}): building it again",
                entry.dir().display()
            ),
        }
    }
    build(cfg, &toolchain, &entry, &shell)?;
    Ok(entry.sysroot())
}

/// Builds the entry in a staging folder and renames it into place.
fn build(cfg: &Config, toolchain: &Toolchain, entry: &Entry, shell: &Shell) -> Result<()> {
    let library = rust_src(toolchain)?;
    let cpu = &cfg.target_cpu;
    let staging = entry.stage()?;
    let src = staging.path().join("src");

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

/// rust-src's `library` folder, or an error saying how to install it.
fn rust_src(toolchain: &Toolchain) -> Result<PathBuf> {
    if !toolchain.is_nightly() {
        bail!(
            "{} is {}, not a nightly, and has no nvptx64 standard library (pass a nightly rustc, e.g. from `rustup which rustc --toolchain nightly`)",
            toolchain.rustc.display(),
            toolchain.release
        );
    }
    let Some(library) = toolchain.rust_src() else {
        bail!(
            "the toolchain at {} has no nvptx64 standard library and no rust-src to build core and alloc from (run `rustup component add rust-src --toolchain {}`)",
            toolchain.sysroot.display(),
            toolchain.rustup_name()
        )
    };
    Ok(library)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toolchain_without_rust_src_names_the_command_that_adds_it() {
        let dir = tempfile::tempdir().unwrap();
        let sysroot = dir.path().join("toolchains/nightly-x86_64-unknown-linux-gnu");
        let toolchain = Toolchain {
            rustc: sysroot.join("bin/rustc"),
            sysroot: sysroot.clone(),
            verbose_version: String::new(),
            release: "1.97.0-nightly".to_owned(),
            commit_hash: None,
        };
        let error = rust_src(&toolchain).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "the toolchain at {} has no nvptx64 standard library and no rust-src to build core and alloc from (run `rustup component add rust-src --toolchain nightly-x86_64-unknown-linux-gnu`)",
                sysroot.display()
            )
        );

        let library = sysroot.join("lib/rustlib/src/rust/library");
        // Both crates the sysroot is built from.
        for krate in ["core", "alloc"] {
            assert!(rust_src(&toolchain).is_err(), "found without {krate}");
            std::fs::create_dir_all(library.join(krate).join("src")).unwrap();
            std::fs::write(library.join(krate).join("src/lib.rs"), "").unwrap();
        }
        assert_eq!(rust_src(&toolchain).unwrap(), library);
    }
}
