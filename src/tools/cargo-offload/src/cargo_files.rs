//! Where cargo and rustup keep their files, for what reads them beside cargo: the record of
//! device images (fresh.rs) and the user's rustflags (flags.rs).

use std::path::{Path, PathBuf};

/// `$var`, else `$HOME/<default>` (`CARGO_HOME` and `.cargo`, `RUSTUP_HOME` and `.rustup`).
pub(crate) fn home_dir(var: &str, default: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(default)))
}

/// cargo's configuration files for `dirs` (each folder's `.cargo/config.toml` and
/// `.cargo/config`) and those of `CARGO_HOME`, whether they exist or not.
pub(crate) fn config_files<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = dirs.into_iter().map(|d| d.join(".cargo")).collect();
    folders.extend(home_dir("CARGO_HOME", ".cargo"));
    folders.iter().flat_map(|d| [d.join("config.toml"), d.join("config")]).collect()
}

/// Whether TOML text has a line `<key> = ...` (in any table: one in another table counts too,
/// which is on the safe side for both readers).
pub(crate) fn sets_key(text: &str, key: &str) -> bool {
    text.lines().any(|line| {
        line.trim_start().strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with('='))
    })
}
