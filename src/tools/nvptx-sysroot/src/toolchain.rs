//! What a rustc toolchain is (version, sysroot) and which sysroot sources it holds.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use crate::shell::Shell;

/// The target this crate builds a sysroot for.
pub(crate) const TARGET: &str = offload_abi::nvptx::TRIPLE;

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
        Self::from_answers(rustc, version, &sysroot)
    }

    /// [`Toolchain::query`], its answers kept in `cache_dir` for this very rustc binary (its
    /// path, size, inode and times: an updated toolchain is a new binary): each build asks once
    /// instead of running rustc twice (about 50 ms).
    pub(crate) fn query_cached(rustc: &Path, shell: &Shell, cache_dir: &Path) -> Result<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let Ok(meta) = std::fs::metadata(rustc) else { return Self::query(rustc, shell) };
        let identity = format!(
            "{} {} {} {}.{} {}.{}",
            rustc.display(),
            meta.len(),
            meta.ino(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.ctime(),
            meta.ctime_nsec()
        );
        let mut hasher = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&identity, &mut hasher);
        let file = cache_dir.join(format!("rustc-{:016x}.txt", std::hash::Hasher::finish(&hasher)));
        // identity, then the sysroot, then `rustc -vV`: one file, written whole
        if let Ok(text) = std::fs::read_to_string(&file)
            && let Some((first, rest)) = text.split_once('\n')
            && first == identity
            && let Some((sysroot, version)) = rest.split_once('\n')
        {
            return Self::from_answers(rustc, version.to_owned(), sysroot);
        }
        let toolchain = Self::query(rustc, shell)?;
        let text =
            format!("{identity}\n{}\n{}", toolchain.sysroot.display(), toolchain.verbose_version);
        // Best effort: without it, the next build asks rustc again.
        let _ = std::fs::create_dir_all(cache_dir).and_then(|()| {
            let mut aside = tempfile::NamedTempFile::new_in(cache_dir)?;
            std::io::Write::write_all(&mut aside, text.as_bytes())?;
            aside.persist(&file).map(drop).map_err(|e| e.error)
        });
        Ok(toolchain)
    }

    fn from_answers(rustc: &Path, version: String, sysroot: &str) -> Result<Self> {
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    /// A `rustc` that answers `-vV` and `--print sysroot`, counting its runs in `runs`.
    fn fake_rustc(dir: &Path, release: &str) -> PathBuf {
        let rustc = dir.join("rustc");
        let script = format!(
            "#!/bin/sh\necho run >> {}/runs\nif [ \"$1\" = -vV ]; then printf 'rustc x\\nrelease: {release}\\n'; else echo /opt/sysroot; fi\n",
            dir.display()
        );
        std::fs::write(&rustc, script).unwrap();
        std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).unwrap();
        rustc
    }

    fn runs(dir: &Path) -> usize {
        std::fs::read_to_string(dir.join("runs")).map_or(0, |s| s.lines().count())
    }

    #[test]
    fn the_answers_of_one_rustc_binary_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let rustc = fake_rustc(dir.path(), "1.97.0-nightly");
        let shell = Shell::new(false);
        let first = Toolchain::query_cached(&rustc, &shell, &cache).unwrap();
        assert_eq!(runs(dir.path()), 2);
        let again = Toolchain::query_cached(&rustc, &shell, &cache).unwrap();
        assert_eq!(runs(dir.path()), 2, "the second build asks nothing");
        assert_eq!((again.release, again.sysroot), (first.release, first.sysroot));
        assert_eq!(again.verbose_version, first.verbose_version);

        // A new binary in the same place (a toolchain update) is asked again.
        std::fs::remove_file(&rustc).unwrap();
        let rustc = fake_rustc(dir.path(), "1.98.0-nightly");
        let updated = Toolchain::query_cached(&rustc, &shell, &cache).unwrap();
        assert_eq!(runs(dir.path()), 4);
        assert_eq!(updated.release, "1.98.0-nightly");
    }
}
