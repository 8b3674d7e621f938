//! What a rustc toolchain is (version, sysroot) and which sysroot sources it holds.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use offload_support::command::Runner;
use offload_support::toolchain;

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
        shell.note(&format!("asking {} for its version and sysroot", rustc.display()));
        let runner = Runner::default();
        let version = toolchain::verbose_version(&runner, rustc)?;
        let sysroot = toolchain::sysroot(&runner, rustc, None)?;
        Self::from_answers(rustc, version, &sysroot.to_string_lossy())
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
        let file = cache_dir.join(record_name(&identity));
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
        Some(toolchain::rust_src_library(&self.sysroot)).filter(|library| {
            ["core", "alloc"].iter().all(|k| library.join(k).join("src/lib.rs").is_file())
        })
    }

    /// The name rustup knows the toolchain by (its folder under rustup's `toolchains`, e.g.
    /// `nightly-x86_64-unknown-linux-gnu`), else `nightly`.
    pub(crate) fn rustup_name(&self) -> String {
        let in_rustup =
            self.sysroot.parent().and_then(Path::file_name) == Some("toolchains".as_ref());
        self.sysroot
            .file_name()
            .filter(|_| in_rustup)
            .map_or_else(|| "nightly".to_owned(), |name| name.to_string_lossy().into_owned())
    }

    /// The cargo of the same toolchain, else the one on `PATH`.
    pub(crate) fn cargo(&self) -> PathBuf {
        let sibling = self.rustc.with_file_name(format!("cargo{}", std::env::consts::EXE_SUFFIX));
        if sibling.is_file() { sibling } else { PathBuf::from("cargo") }
    }
}

/// The file in the cache folder that keeps the answers of the rustc binary `identity` names:
/// named by a stable hash (blake3), so that every Rust release finds the same file. Files named
/// before (by std's `DefaultHasher`, 16 digits) are never looked at, and the identity on a
/// record's first line is checked before its answers are used.
fn record_name(identity: &str) -> String {
    let hash = blake3::hash(identity.as_bytes()).to_hex();
    format!("rustc-{}.txt", &hash[..RECORD_HASH_DIGITS])
}

/// How many hex digits of the blake3 hash name a record.
const RECORD_HASH_DIGITS: usize = 32;

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

    /// The one record `query_cached` wrote in `cache`, and its text.
    fn only_record(cache: &Path) -> (PathBuf, String) {
        let records: Vec<PathBuf> = std::fs::read_dir(cache)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with("rustc-"))
            .collect();
        assert_eq!(records.len(), 1, "{records:?}");
        let text = std::fs::read_to_string(&records[0]).unwrap();
        (records[0].clone(), text)
    }

    #[test]
    fn records_are_named_by_blake3() {
        // blake3 of no bytes: af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262
        assert_eq!(record_name(""), "rustc-af1349b9f5f9a1a6a0404dea36dcc949.txt");
    }

    #[test]
    fn records_under_other_names_or_of_other_binaries_are_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let rustc = fake_rustc(dir.path(), "1.97.0-nightly");
        let shell = Shell::new(false);
        Toolchain::query_cached(&rustc, &shell, &cache).unwrap();
        assert_eq!(runs(dir.path()), 2);
        let (record, text) = only_record(&cache);
        let (identity, _) = text.split_once('\n').unwrap();
        let wrong = format!("{identity}\n/elsewhere\nrustc x\nrelease: 0.0.0-wrong\n");

        // A record named as before blake3 (16 digits of std's `DefaultHasher`) is missed.
        std::fs::remove_file(&record).unwrap();
        std::fs::write(cache.join("rustc-0123456789abcdef.txt"), &wrong).unwrap();
        let toolchain = Toolchain::query_cached(&rustc, &shell, &cache).unwrap();
        assert_eq!(runs(dir.path()), 4, "rustc is asked again");
        assert_eq!(toolchain.sysroot, Path::new("/opt/sysroot"));

        // A record whose first line names another binary is not believed.
        std::fs::write(&record, wrong.replacen(identity, "another rustc", 1)).unwrap();
        let toolchain = Toolchain::query_cached(&rustc, &shell, &cache).unwrap();
        assert_eq!(runs(dir.path()), 6, "rustc is asked again");
        assert_eq!(toolchain.release, "1.97.0-nightly");
    }

    #[test]
    fn rustup_names_a_toolchain_by_its_folder() {
        let toolchain = |sysroot: &str| Toolchain {
            rustc: PathBuf::from("rustc"),
            sysroot: PathBuf::from(sysroot),
            verbose_version: String::new(),
            release: "1.97.0-nightly".to_owned(),
            commit_hash: None,
        };
        let rustup =
            toolchain("/opt/rustup/toolchains/nightly-2026-05-19-x86_64-unknown-linux-gnu");
        assert_eq!(rustup.rustup_name(), "nightly-2026-05-19-x86_64-unknown-linux-gnu");
        assert_eq!(toolchain("/src/rust/build/host/stage1").rustup_name(), "nightly");
    }
}
