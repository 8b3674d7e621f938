//! The on-disk cache: one entry per toolchain and target CPU, built in a staging folder
//! next to it and renamed into place, so an interrupted build never leaves half an entry.
//!
//! ```text
//! <cache_dir>/
//!     <commit hash, 12 digits>-<target cpu>-<recipe, 8 hex digits>/
//!                                                e.g. e50aa6fba4e6-sm_90-1f0c9a2b; a locally
//!                                                built rustc's is local-<16 hex digits>-...
//!         stamp                                  recipe, target cpu and `rustc -vV`
//!         libraries                              each library's digest, size and name: an
//!                                                entry whose files differ is rebuilt
//!         sysroot/lib/rustlib/nvptx64-nvidia-cuda/lib/
//!             libcore.rlib libcompiler_builtins.rlib liballoc.rlib
//!         src/vendor/compiler_builtins-<version>/    patched for nvptx64
//!         src/fetch/Cargo.toml                   the manifest cargo vendored it with
//!     rustc-<32 hex digits>.txt                  one rustc binary's answers (toolchain.rs)
//!     .staging-<key>-XXXXXX/                     an entry being built; removed on failure,
//!                                                or an hour later if the build was killed
//! ```

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use tempfile::TempDir;

use crate::toolchain::Toolchain;

/// Names how entries are built; change it whenever the build's flags or inputs change, so
/// that entries built the old way are rebuilt.
const RECIPE: &str = "offload-nvptx-sysroot recipe 2: core and alloc from rust-src, compiler_builtins 0.1.160 from crates.io; -Copt-level=3 -Cembed-bitcode=yes";

/// How many digits of the commit hash name an entry.
const HASH_DIGITS: usize = 12;

/// Staging folders this old were left by a killed build (a build takes about 30 s).
const LEFTOVER_AGE: Duration = Duration::from_secs(60 * 60);

/// The file of an entry recording its libraries.
const LIBRARIES: &str = "libraries";

/// Name prefixes of the folders an entry is built in, and of outdated entries being removed.
const STAGING_PREFIX: &str = ".staging-";
const STALE_PREFIX: &str = ".stale-";

/// The cache entry of one toolchain and target CPU.
pub(crate) struct Entry {
    cache_dir: PathBuf,
    key: String,
    /// What `stamp` holds in a complete entry built by this recipe.
    stamp: String,
}

impl Entry {
    pub(crate) fn new(cache_dir: &Path, toolchain: &Toolchain, target_cpu: &str) -> Result<Self> {
        ensure!(
            !target_cpu.is_empty()
                && target_cpu.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'),
            "invalid target cpu `{target_cpu}` (use an nvptx cpu name such as `sm_90`)"
        );
        let toolchain_id = match &toolchain.commit_hash {
            Some(hash) => hash.chars().take(HASH_DIGITS).collect(),
            // A locally built rustc: tell toolchains apart by version text and location.
            None => {
                let text = format!("{}{}", toolchain.verbose_version, toolchain.sysroot.display());
                format!("local-{}", &blake3::hash(text.as_bytes()).to_hex()[..16])
            }
        };
        Ok(Self {
            cache_dir: cache_dir.to_owned(),
            key: entry_name(&toolchain_id, target_cpu),
            stamp: format!("{RECIPE}\ntarget-cpu: {target_cpu}\n{}", toolchain.verbose_version),
        })
    }

    pub(crate) fn dir(&self) -> PathBuf {
        self.cache_dir.join(&self.key)
    }

    pub(crate) fn sysroot(&self) -> PathBuf {
        self.dir().join("sysroot")
    }

    /// Whether the entry exists and was built by this recipe for this toolchain.
    pub(crate) fn is_complete(&self) -> bool {
        fs::read_to_string(self.dir().join("stamp")).is_ok_and(|stamp| stamp == self.stamp)
    }

    /// Whether the complete entry's libraries are the ones it was built with, else what
    /// differs (a file truncated, changed or missing since: a disk or a hand that damaged it).
    pub(crate) fn check_libraries(&self) -> Result<(), String> {
        let recorded = fs::read_to_string(self.dir().join(LIBRARIES))
            .map_err(|e| format!("its `{LIBRARIES}` record cannot be read: {e}"))?;
        let found = libraries_record(&self.sysroot()).map_err(|e| format!("{e:#}"))?;
        if recorded == found {
            return Ok(());
        }
        let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
        let (recorded, found) = (lines(&recorded), lines(&found));
        let changed = recorded
            .iter()
            .filter(|line| !found.contains(line))
            .filter_map(|line| line.rsplit(' ').next())
            .collect::<Vec<_>>();
        Err(if changed.is_empty() {
            "it holds libraries it was not built with".to_owned()
        } else {
            format!("{} changed since it was built", changed.join(", "))
        })
    }

    /// A fresh staging folder to build this entry in.
    pub(crate) fn stage(&self) -> Result<Staging> {
        fs::create_dir_all(&self.cache_dir).with_context(|| {
            format!("cannot create the cache folder {}", self.cache_dir.display())
        })?;
        remove_leftovers(&self.cache_dir);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{STAGING_PREFIX}{}-", self.key))
            .tempdir_in(&self.cache_dir)
            .with_context(|| {
                format!("cannot create a staging folder in {}", self.cache_dir.display())
            })?;
        Ok(Staging { dir })
    }
}

/// An entry being built; removed when dropped unless committed.
pub(crate) struct Staging {
    dir: TempDir,
}

impl Staging {
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn sysroot(&self) -> PathBuf {
        self.path().join("sysroot")
    }

    /// Stamps the staged entry and renames it into place. If another build finished the
    /// same entry first, keeps that one; one whose stamp differs (built by another toolchain of
    /// the same commit, or unfinished) is replaced.
    pub(crate) fn commit(self, entry: &Entry) -> Result<()> {
        fs::write(self.path().join(LIBRARIES), libraries_record(&self.sysroot())?)?;
        fs::write(self.path().join("stamp"), &entry.stamp)?;
        let dest = entry.dir();
        if dest.exists() && !(entry.is_complete() && entry.check_libraries().is_ok()) {
            discard(&entry.cache_dir, &dest)?;
        }
        match fs::rename(self.path(), &dest) {
            Ok(()) => {
                // Renamed away: nothing is left for the `TempDir` to remove.
                let _ = self.dir.keep();
                Ok(())
            }
            Err(_) if entry.is_complete() => Ok(()),
            Err(error) => Err(error)
                .with_context(|| format!("cannot move the new sysroot to {}", dest.display())),
        }
    }
}

/// What `libraries` records of a sysroot: a line per library (digest, bytes, name), by name.
fn libraries_record(sysroot: &Path) -> Result<String> {
    let dir = sysroot.join("lib/rustlib").join(crate::toolchain::TARGET).join("lib");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut record = String::new();
    for name in names {
        let bytes = fs::read(dir.join(&name))
            .with_context(|| format!("cannot read {}", dir.join(&name).display()))?;
        record += &format!("{} {} {name}\n", blake3::hash(&bytes).to_hex(), bytes.len());
    }
    Ok(record)
}

/// Removes `dir` after first renaming it aside, so no reader sees it half deleted.
/// The folder of the entry of toolchain `toolchain_id` for `target_cpu`. The recipe is in the
/// name, not only in the stamp: programs built against an entry name its folder in their flags,
/// and cargo rebuilds them only when those change, so a new recipe must not rebuild an entry in
/// place under them.
pub fn entry_name(toolchain_id: &str, target_cpu: &str) -> String {
    let recipe = &blake3::hash(RECIPE.as_bytes()).to_hex()[..8];
    format!("{toolchain_id}-{target_cpu}-{recipe}")
}

fn discard(cache_dir: &Path, dir: &Path) -> Result<()> {
    let aside = tempfile::Builder::new().prefix(STALE_PREFIX).tempdir_in(cache_dir)?;
    match fs::rename(dir, aside.path().join("entry")) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(()),
        Err(error) => {
            Err(error).with_context(|| format!("cannot remove the outdated {}", dir.display()))
        }
    }
    // `aside` is removed with what it holds when it goes out of scope.
}

/// Removes staging and stale folders that killed builds left behind; best effort.
fn remove_leftovers(cache_dir: &Path) {
    let Ok(entries) = fs::read_dir(cache_dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let leftover = name.starts_with(STAGING_PREFIX) || name.starts_with(STALE_PREFIX);
        let age =
            entry.metadata().and_then(|meta| meta.modified()).ok().and_then(|t| t.elapsed().ok());
        if leftover && age.is_some_and(|age| age > LEFTOVER_AGE) {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolchain() -> Toolchain {
        Toolchain {
            rustc: PathBuf::from("/toolchain/bin/rustc"),
            sysroot: PathBuf::from("/toolchain"),
            verbose_version: "rustc 1.97.0-nightly".to_owned(),
            release: "1.97.0-nightly".to_owned(),
            commit_hash: Some("e50aa6fba4e63ab34c72bf9acfd2c307c1155d1a".to_owned()),
        }
    }

    /// Stages an entry whose libraries are `core` and `alloc` holding `text`, and commits it.
    fn build(entry: &Entry, text: &str) {
        let staging = entry.stage().unwrap();
        let lib = staging.sysroot().join("lib/rustlib").join(crate::toolchain::TARGET).join("lib");
        fs::create_dir_all(&lib).unwrap();
        for name in ["libcore.rlib", "liballoc.rlib"] {
            fs::write(lib.join(name), text).unwrap();
        }
        staging.commit(entry).unwrap();
    }

    #[test]
    fn a_damaged_library_is_found_and_its_entry_replaced() {
        let cache = tempfile::tempdir().unwrap();
        let entry = Entry::new(cache.path(), &toolchain(), "sm_90").unwrap();
        build(&entry, "core and alloc");
        assert!(entry.is_complete());
        assert_eq!(entry.check_libraries(), Ok(()));

        // Truncated since: the record names it.
        let core = entry
            .sysroot()
            .join("lib/rustlib")
            .join(crate::toolchain::TARGET)
            .join("lib/libcore.rlib");
        fs::write(&core, "core").unwrap();
        let why = entry.check_libraries().unwrap_err();
        assert_eq!(why, "libcore.rlib changed since it was built");

        // A new build of the entry replaces the damaged one, though its stamp is whole.
        build(&entry, "core and alloc, again");
        assert_eq!(entry.check_libraries(), Ok(()));
        assert_eq!(fs::read_to_string(&core).unwrap(), "core and alloc, again");
    }

    #[test]
    fn an_interrupted_build_leaves_no_entry() {
        let cache = tempfile::tempdir().unwrap();
        let entry = Entry::new(cache.path(), &toolchain(), "sm_90").unwrap();
        let staging = entry.stage().unwrap();
        fs::create_dir_all(staging.sysroot()).unwrap();
        // Killed here: the staging folder is all there is, and the entry is not complete.
        std::mem::forget(staging);
        assert!(!entry.is_complete());
        build(&entry, "whole");
        assert_eq!(entry.check_libraries(), Ok(()));
    }
}
