//! The user's rustflags for the host target, as cargo would take them, so that cargo offload can
//! add its own after them instead of replacing them.
//!
//! cargo takes the first of: `CARGO_ENCODED_RUSTFLAGS`, `RUSTFLAGS`, the `rustflags` of the
//! `[target]` tables that match the target (`[target.<triple>]` and the `[target.'cfg(..)']`
//! whose expression holds), `[build] rustflags`. Each configuration value is the files' (merged)
//! followed by its environment variable's (`CARGO_TARGET_<TRIPLE>_RUSTFLAGS`,
//! `CARGO_BUILD_RUSTFLAGS`). cargo offload must set flags of its own (the linker,
//! `-Clinker-plugin-lto`, `--cfg`s), which would hide the configuration's from cargo: so it
//! reads them (`cargo config get`, which nightly cargo has) and passes the user's flags first,
//! its own after them, in the one variable cargo then reads.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};
use cfg_expr::{Expression, Predicate};

use crate::cargo_files;
use crate::command::Runner;
use crate::image::HOST_TRIPLE;

/// The environment variable that adds to `[target.<host triple>] rustflags`.
const TARGET_ENV: &str = "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS";
/// The one that adds to `[build] rustflags`.
const BUILD_ENV: &str = "CARGO_BUILD_RUSTFLAGS";

/// The user's flags and what could not be applied, to warn about.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct UserFlags {
    pub(crate) flags: Vec<String>,
    pub(crate) warning: Option<String>,
}

/// The user's rustflags for the host target. `cargo` reads the configuration of the working
/// folder (as it does for the builds); `rustc` answers what `cfg(..)` holds for the target. Both
/// are asked through `runner`'s queries.
pub(crate) fn user_rustflags(runner: &Runner, cargo: &str, rustc: &Path) -> UserFlags {
    if let Some(encoded) = std::env::var_os("CARGO_ENCODED_RUSTFLAGS") {
        let encoded = encoded.to_string_lossy().into_owned();
        let flags = encoded.split('\x1f').filter(|f| !f.is_empty()).map(str::to_owned).collect();
        return UserFlags { flags, warning: None };
    }
    if let Some(flags) = std::env::var_os("RUSTFLAGS") {
        return UserFlags { flags: split(&flags.to_string_lossy()), warning: None };
    }
    let env = |var| std::env::var_os(var).map(|v| split(&v.to_string_lossy()));
    let (env_target, env_build) = (env(TARGET_ENV), env(BUILD_ENV));
    let json = match config(runner, cargo) {
        Ok(json) => json,
        // A stable cargo has no `config get`: the environment's flags still count, and a file
        // that sets rustflags is named.
        Err(e) => {
            let cwd = std::env::current_dir().ok();
            let files = cargo_files::config_files(cwd.iter().flat_map(|c| c.ancestors()));
            let warning = files.into_iter().find(|f| sets_rustflags(f)).map(|file| {
                format!(
                    "the rustflags of {} are not applied: {e:#} (set RUSTFLAGS instead)",
                    file.display()
                )
            });
            let flags = env_target.filter(|f| !f.is_empty()).or(env_build).unwrap_or_default();
            return UserFlags { flags, warning };
        }
    };
    let cfgs = || host_cfgs(runner, rustc);
    resolve(&json, env_target, env_build, cfgs).unwrap_or_else(|e| UserFlags {
        flags: Vec::new(),
        warning: Some(format!("the rustflags of cargo's configuration are not applied: {e:#}")),
    })
}

/// RUSTFLAGS and the configuration's strings: flags apart at spaces.
fn split(flags: &str) -> Vec<String> {
    flags.split(' ').map(str::trim).filter(|f| !f.is_empty()).map(str::to_owned).collect()
}

/// cargo's configuration files, merged, as JSON (without what the environment sets).
fn config(runner: &Runner, cargo: &str) -> Result<serde_json::Value> {
    let get = ["-Zunstable-options", "config", "get", "--format", "json"];
    let output = runner.queries().capture(Command::new(cargo).args(get))?;
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

/// The flags cargo would take from the configuration `json` and the environment's additions,
/// for the host target; `cfgs` gives what `cfg(..)` holds there, asked only where a table
/// needs it.
fn resolve(
    json: &serde_json::Value,
    env_target: Option<Vec<String>>,
    env_build: Option<Vec<String>>,
    cfgs: impl FnOnce() -> Result<Vec<String>>,
) -> Result<UserFlags> {
    let mut warning = None;
    let mut target = Vec::new();
    let mut cfgs = Some(cfgs);
    let mut known: Option<Vec<String>> = None;
    if let Some(tables) = json.get("target").and_then(|t| t.as_object()) {
        for (name, table) in tables {
            let Some(flags) = table.get("rustflags") else { continue };
            let flags = flag_list(flags).with_context(|| format!("target.{name}.rustflags"))?;
            if name == HOST_TRIPLE {
                target.extend(flags);
            } else if name.starts_with("cfg(") {
                if known.is_none()
                    && let Some(cfgs) = cfgs.take()
                {
                    known = Some(cfgs().context("asking rustc what cfg(..) holds")?);
                }
                let expression = Expression::parse(name)
                    .map_err(|e| anyhow::anyhow!("[target.'{name}']: {e}"))?;
                let holds = holds(&expression, known.as_deref().unwrap_or_default());
                match holds {
                    Some(true) => target.extend(flags),
                    Some(false) => {}
                    None => {
                        warning = Some(format!(
                            "the rustflags of [target.'{name}'] are not applied: cargo offload cannot tell whether it holds"
                        ))
                    }
                }
            }
        }
    }
    target.extend(env_target.unwrap_or_default());
    if !target.is_empty() {
        return Ok(UserFlags { flags: target, warning });
    }
    let mut build = match json.get("build").and_then(|b| b.get("rustflags")) {
        Some(flags) => flag_list(flags).context("build.rustflags")?,
        None => Vec::new(),
    };
    build.extend(env_build.unwrap_or_default());
    Ok(UserFlags { flags: build, warning })
}

/// Whether `expression` holds for the host target whose `rustc --print cfg` lines are `cfgs`;
/// `None` for what only cargo knows (`feature`, `test`, `proc_macro`).
fn holds(expression: &Expression, cfgs: &[String]) -> Option<bool> {
    let has = |line: String| cfgs.contains(&line);
    let target = cfg_expr::targets::get_builtin_target_by_triple(HOST_TRIPLE);
    let mut unknown = false;
    let result = expression.eval(|predicate| match predicate {
        Predicate::Target(p) => target.is_some_and(|t| p.matches(t)),
        Predicate::TargetFeature(f) => has(format!("target_feature=\"{f}\"")),
        Predicate::DebugAssertions => has("debug_assertions".into()),
        Predicate::Flag(f) => has((*f).to_owned()),
        Predicate::KeyValue { key, val } => has(format!("{key}=\"{val}\"")),
        Predicate::Test | Predicate::ProcMacro | Predicate::Feature(_) => {
            unknown = true;
            false
        }
    });
    (!unknown).then_some(result)
}

/// What `cfg(..)` holds for the host target: `rustc --print cfg`'s lines.
fn host_cfgs(runner: &Runner, rustc: &Path) -> Result<Vec<String>> {
    let print = ["--print", "cfg", "--target", HOST_TRIPLE];
    let cfgs = runner.queries().stdout(Command::new(rustc).args(print))?;
    Ok(cfgs.lines().map(str::to_owned).collect())
}

/// Whether a configuration file has a `rustflags = ...` line.
fn sets_rustflags(file: &Path) -> bool {
    std::fs::read_to_string(file).is_ok_and(|text| cargo_files::sets_key(&text, "rustflags"))
}

/// A `rustflags` value: an array of flags, or one string split at spaces.
fn flag_list(value: &serde_json::Value) -> Result<Vec<String>> {
    match value {
        serde_json::Value::String(s) => Ok(split(s)),
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

    /// What `rustc --print cfg` says for x86_64 Linux, in part.
    fn cfgs() -> Result<Vec<String>> {
        Ok([
            "debug_assertions",
            "panic=\"unwind\"",
            "target_arch=\"x86_64\"",
            "target_feature=\"sse2\"",
            "target_os=\"linux\"",
            "unix",
        ]
        .map(str::to_owned)
        .to_vec())
    }

    fn flags(json: serde_json::Value) -> UserFlags {
        resolve(&json, None, None, cfgs).unwrap()
    }

    fn list(flags: &[&str]) -> Vec<String> {
        flags.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn build_rustflags_apply_unless_the_target_has_its_own() {
        let build = json!({"build": {"rustflags": ["-Ctarget-cpu=native", "--cfg", "fast"]}});
        assert_eq!(flags(build).flags, ["-Ctarget-cpu=native", "--cfg", "fast"]);
        let both = json!({
            "build": {"rustflags": ["-Ctarget-cpu=native"]},
            "target": {HOST_TRIPLE: {"rustflags": "-Copt-level=2  -g"}, "aarch64-unknown-linux-gnu": {"rustflags": ["-Cx"]}}
        });
        assert_eq!(flags(both), UserFlags { flags: list(&["-Copt-level=2", "-g"]), warning: None });
        // An empty list of the target's: cargo goes on to [build].
        let empty =
            json!({"build": {"rustflags": ["-g"]}, "target": {HOST_TRIPLE: {"rustflags": []}}});
        assert_eq!(flags(empty).flags, ["-g"]);
        assert_eq!(flags(serde_json::Value::Null), UserFlags::default());
        assert_eq!(flags(json!({"build": {"jobs": 2}})), UserFlags::default());
    }

    #[test]
    fn the_environment_adds_to_the_files() {
        let build = json!({"build": {"rustflags": ["--cfg=file"]}});
        let user = resolve(&build, None, Some(list(&["--cfg=env"])), cfgs).unwrap();
        assert_eq!(user.flags, ["--cfg=file", "--cfg=env"]);
        // The target's variable takes the place of [build].
        let user = resolve(&build, Some(list(&["--cfg=target"])), Some(list(&["--cfg=env"])), cfgs)
            .unwrap();
        assert_eq!(user.flags, ["--cfg=target"]);
        let user = resolve(&serde_json::Value::Null, None, Some(list(&["-g"])), cfgs).unwrap();
        assert_eq!(user.flags, ["-g"]);
    }

    #[test]
    fn cfg_tables_join_the_target_where_they_hold() {
        let config = json!({
            "build": {"rustflags": ["-g"]},
            "target": {
                "cfg(unix)": {"rustflags": ["--cfg=unix_t"]},
                "cfg(windows)": {"rustflags": ["--cfg=windows_t"]},
                "cfg(all(target_arch = \"x86_64\", target_feature = \"sse2\", not(debug_assertions)))": {"rustflags": ["--cfg=release_t"]},
                "cfg(any(target_os = \"linux\", target_os = \"macos\"))": {"rustflags": ["--cfg=linux_t"]},
            }
        });
        let user = flags(config);
        assert_eq!(user.warning, None);
        // [build] no longer applies: a [target] table does.
        assert_eq!(user.flags, ["--cfg=linux_t", "--cfg=unix_t"]);
        // Only cfg(windows): nothing of [target] holds, and [build] applies.
        let windows = json!({"build": {"rustflags": ["-g"]}, "target": {"cfg(windows)": {"rustflags": ["-Cx"]}}});
        assert_eq!(flags(windows), UserFlags { flags: list(&["-g"]), warning: None });
    }

    #[test]
    fn what_only_cargo_knows_is_named_in_a_warning() {
        let config = json!({"build": {"rustflags": ["-g"]}, "target": {"cfg(feature = \"x\")": {"rustflags": ["-Cx"]}}});
        let user = flags(config);
        assert_eq!(user.flags, ["-g"]);
        assert!(user.warning.unwrap().contains("[target.'cfg(feature = \"x\")']"));
    }

    #[test]
    fn rustc_is_asked_only_for_cfg_tables() {
        let config = json!({"build": {"rustflags": ["-g"]}});
        let never = || -> Result<Vec<String>> { panic!("rustc asked") };
        assert_eq!(resolve(&config, None, None, never).unwrap().flags, ["-g"]);
    }

    #[test]
    fn a_value_of_another_type_is_an_error() {
        let bad = json!({"build": {"rustflags": 3}});
        let err = resolve(&bad, None, None, cfgs).unwrap_err();
        assert!(
            format!("{err:#}").contains("build.rustflags: not a string or an array"),
            "{err:#}"
        );
    }

    #[test]
    fn a_rustflags_line_is_a_key_not_a_word() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "# rustflags are set elsewhere\n[env]\nX = \"rustflags\"\n").unwrap();
        assert!(!sets_rustflags(&file));
        std::fs::write(&file, "[build]\n  rustflags= [\"-g\"]\n").unwrap();
        assert!(sets_rustflags(&file));
    }
}
