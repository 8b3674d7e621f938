//! The user's rustflags for the host target, as cargo would take them, so that cargo offload can
//! add its own after them instead of replacing them.
//!
//! cargo takes the first of: `CARGO_ENCODED_RUSTFLAGS`, `RUSTFLAGS`, the `rustflags` of the
//! `[target]` tables that match the target, `[build] rustflags`. cargo offload must set flags of
//! its own (the linker, `-Clinker-plugin-lto`, `--cfg`s), which would hide the configuration's
//! from cargo: so it reads them (`cargo config get`, which nightly cargo has) and passes the
//! user's flags first, its own after them, in the one variable cargo then reads.

use std::process::Command;

use anyhow::{Context as _, Result, bail};

use crate::image::HOST_TRIPLE;

/// The user's flags and what could not be applied, to warn about.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct UserFlags {
    pub(crate) flags: Vec<String>,
    pub(crate) warning: Option<String>,
}

/// The user's rustflags for the host target; `cargo` reads the configuration of the working
/// folder (as it does for the builds).
pub(crate) fn user_rustflags(cargo: &str) -> UserFlags {
    if let Some(encoded) = std::env::var_os("CARGO_ENCODED_RUSTFLAGS") {
        let encoded = encoded.to_string_lossy().into_owned();
        let flags = encoded.split('\x1f').filter(|f| !f.is_empty()).map(str::to_owned).collect();
        return UserFlags { flags, warning: None };
    }
    if let Some(flags) = std::env::var_os("RUSTFLAGS") {
        let flags = flags.to_string_lossy().split_whitespace().map(str::to_owned).collect();
        return UserFlags { flags, warning: None };
    }
    match config(cargo).and_then(|json| from_config(&json)) {
        Ok(user) => user,
        // Only said where a configuration file sets rustflags (a stable cargo has no `config
        // get`, and most configurations have none).
        Err(e) => UserFlags {
            flags: Vec::new(),
            warning: config_files().iter().find(|f| sets_rustflags(f)).map(|file| {
                format!(
                    "the rustflags of {} are not applied: {e:#} (set RUSTFLAGS instead)",
                    file.display()
                )
            }),
        },
    }
}

/// cargo's configuration files, from the working folder up and in `CARGO_HOME`.
fn config_files() -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = std::env::current_dir()
        .map(|cwd| cwd.ancestors().map(|d| d.join(".cargo")).collect())
        .unwrap_or_default();
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")));
    dirs.extend(home);
    dirs.iter().flat_map(|d| [d.join("config.toml"), d.join("config")]).collect()
}

fn sets_rustflags(file: &std::path::Path) -> bool {
    std::fs::read_to_string(file).is_ok_and(|text| text.contains("rustflags"))
}

/// cargo's configuration, merged, as JSON.
fn config(cargo: &str) -> Result<serde_json::Value> {
    let output = Command::new(cargo)
        .args(["-Zunstable-options", "config", "get", "--format", "json"])
        .output()
        .with_context(|| format!("running {cargo} config get"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!("`cargo config get` failed: {}", stderr.lines().next().unwrap_or_default());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    // With no configuration at all, cargo prints nothing.
    if text.trim().is_empty() {
        return Ok(serde_json::Value::Null);
    }
    serde_json::from_str(&text).context("reading `cargo config get`'s JSON")
}

/// The flags cargo would take from the configuration `json` for the host target.
fn from_config(json: &serde_json::Value) -> Result<UserFlags> {
    let mut warning = None;
    let mut target_flags = None;
    if let Some(targets) = json.get("target").and_then(|t| t.as_object()) {
        for (name, table) in targets {
            let Some(flags) = table.get("rustflags") else { continue };
            if name == HOST_TRIPLE {
                target_flags =
                    Some(flag_list(flags).with_context(|| format!("target.{name}.rustflags"))?);
            } else if name.starts_with("cfg(") {
                warning = Some(format!(
                    "the rustflags of [target.'{name}'] are not applied by cargo offload (name the target: [target.{HOST_TRIPLE}])"
                ));
            }
        }
    }
    let flags = match target_flags {
        Some(flags) => flags,
        None => match json.get("build").and_then(|b| b.get("rustflags")) {
            Some(flags) => flag_list(flags).context("build.rustflags")?,
            None => Vec::new(),
        },
    };
    Ok(UserFlags { flags, warning })
}

/// A `rustflags` value: an array of flags, or one string split at whitespace.
fn flag_list(value: &serde_json::Value) -> Result<Vec<String>> {
    match value {
        serde_json::Value::String(s) => Ok(s.split_whitespace().map(str::to_owned).collect()),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned).context("a flag that is not a string"))
            .collect(),
        _ => bail!("not a string or an array of strings"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn flags(json: serde_json::Value) -> UserFlags {
        from_config(&json).unwrap()
    }

    #[test]
    fn build_rustflags_apply_unless_the_target_has_its_own() {
        let build = json!({"build": {"rustflags": ["-Ctarget-cpu=native", "--cfg", "fast"]}});
        assert_eq!(flags(build).flags, ["-Ctarget-cpu=native", "--cfg", "fast"]);
        let both = json!({
            "build": {"rustflags": ["-Ctarget-cpu=native"]},
            "target": {HOST_TRIPLE: {"rustflags": "-Copt-level=2  -g"}, "aarch64-unknown-linux-gnu": {"rustflags": ["-Cx"]}}
        });
        assert_eq!(
            flags(both),
            UserFlags { flags: vec!["-Copt-level=2".into(), "-g".into()], warning: None }
        );
        assert_eq!(flags(serde_json::Value::Null), UserFlags::default());
        assert_eq!(flags(json!({"build": {"jobs": 2}})), UserFlags::default());
    }

    #[test]
    fn cfg_tables_are_named_in_a_warning() {
        let cfg = json!({
            "build": {"rustflags": ["-g"]},
            "target": {"cfg(unix)": {"rustflags": ["-Cdebuginfo=1"]}}
        });
        let user = flags(cfg);
        assert_eq!(user.flags, ["-g"]);
        assert!(user.warning.unwrap().contains("[target.'cfg(unix)']"));
    }

    #[test]
    fn a_value_of_another_type_is_an_error() {
        let bad = json!({"build": {"rustflags": 3}});
        let err = from_config(&bad).unwrap_err();
        assert!(
            format!("{err:#}").contains("build.rustflags: not a string or an array"),
            "{err:#}"
        );
    }
}
