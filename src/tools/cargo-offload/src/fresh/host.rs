//! The record of the last build of the host program, beside the device images' record. Where the
//! images' record holds and nothing the host program was built from changed either, a build
//! (or `run`) does not start cargo for the host program at all: cargo would only find it fresh,
//! which costs 20-30 ms, as much as the rest of an unchanged build.
//!
//! It holds only where all of these are as the record has them:
//!
//! - the images' record it was built with (as a file: another build or record of the images is
//!   not this one), which holds for the environment, the options, the manifests, the lockfile,
//!   cargo's configuration, the toolchain and the package's lists of binaries and examples
//!   (fresh.rs);
//! - the cargo command: its arguments (the examples asked for) and what it sets (rustflags with
//!   the images' stamp, the linker, the runtime);
//! - the inputs: the files cargo's dep-info lists for each program built (the package's sources
//!   and those of its path dependencies: cargo does not list the registry's or git's, which do
//!   not change), the files their build scripts watch by an absolute path, and the folders of
//!   the package and of its `src` (a file that appears there, such as a `lib.rs`, changes them);
//! - the outputs: the programs (those whose required features are on) and their dep-info;
//! - no `build.rs` in the folder of the package or of a path package of its graph.
//!
//! An input must also be older than the start of the build that wrote the record by the images'
//! record's margin, the start taken by the clock of the file system the records lie on.
//!
//! Nothing is recorded where cargo would do more than compare files: a path package of the
//! program's graph, or the package itself, has a build script (whose inputs cargo alone knows),
//! a build script watches a folder, cargo keeps compiler messages of a unit it builds to show
//! them again (a warning that a build with nothing to do repeats), or a program's dep-info lists
//! a source that does not exist. A build that runs cargo writes the record again once cargo
//! succeeds; a record older than the images' is no record.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use anyhow::{Result, bail};
use offload_support::digest::Digest;
use serde::{Deserialize, Serialize};

use super::dep_info::dep_info_inputs;
use super::{
    File, State, build_started, files, first_change, nanos_since_1970, record_path, remove_record,
    state, write_record,
};
use crate::command::{Cmd, Runner};
use crate::config::Config;
use crate::project::Project;

/// Bumped when the record's meaning changes (2: the command is a blake3 digest).
const FORMAT: u32 = 2;

#[derive(Serialize, Deserialize, Debug)]
struct HostRecord {
    format: u32,
    /// The images' record the program was linked with, as a file.
    images: State,
    /// The digest of the cargo command.
    command: String,
    /// When the build that wrote the record started (nanoseconds since 1970).
    started: u64,
    inputs: Vec<File>,
    outputs: Vec<File>,
}

/// The host program of `project`, which `build` links with the device images and whose
/// programs it returns: not built where the record holds for the cargo command hashed as
/// `command`, else built, then recorded. `None` checks and records nothing (a dry run, images
/// not held).
pub(crate) fn program(
    config: &Config,
    project: &Project,
    command: Option<&str>,
    build: impl FnOnce() -> Result<Vec<PathBuf>>,
) -> Result<()> {
    if let Some(command) = command {
        match stale(project, command) {
            None => {
                config.status(&format!("the host program of {} is up to date", project.name));
                return Ok(());
            }
            Some(why) if config.runner.verbose => {
                eprintln!("offload: building the host program: {why}");
            }
            Some(_) => {}
        }
        forget(project)?;
    }
    config.status(&format!("building the host program of {}", project.name));
    // (Its file is made in the target folder: not in a dry run.)
    let started = command.map(|_| build_started(project, Instant::now()));
    let programs = build()?;
    if let (Some(command), Some(started)) = (command, started) {
        let written = record(project, command, &programs, started);
        if let Err(e) = written
            && config.runner.verbose
        {
            eprintln!("offload: the host program is not recorded: {e:#}");
        }
    }
    Ok(())
}

/// Where the record of `project`'s host program lies.
fn host_record_path(project: &Project) -> PathBuf {
    record_path(project).with_extension("host.json")
}

/// Why the host program must be built by cargo (`Some`), or `None` where the record holds for
/// the cargo command hashed as `command`.
pub(super) fn stale(project: &Project, command: &str) -> Option<String> {
    let path = host_record_path(project);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(_) => return Some("no record of an earlier build of the host program".into()),
    };
    let Ok(record) = serde_json::from_str::<HostRecord>(&text) else {
        return Some(format!("{} is not a record of this version", path.display()));
    };
    if record.format != FORMAT {
        return Some("a record of the host program of another version".into());
    }
    if record.images != state(&record_path(project)) {
        return Some("the device images were recorded again".into());
    }
    if record.command != command {
        return Some("the host program's cargo command changed".into());
    }
    first_change(&record.inputs, &record.outputs, record.started, |_| false, "the host program")
}

/// Removes the record of `project`'s host program, before cargo builds it: a build that fails
/// must not leave one behind.
fn forget(project: &Project) -> Result<()> {
    remove_record(&host_record_path(project))
}

/// Records the host program's build, which cargo ran as `command` from `started`, making
/// `programs` (paths under `crate::host::release_dir`).
pub(super) fn record(
    project: &Project,
    command: &str,
    programs: &[PathBuf],
    started: SystemTime,
) -> Result<()> {
    if programs.is_empty() {
        bail!("the package has no program, whose dep-info would list its sources");
    }
    if let Some(name) = project.host_build_scripts.first() {
        bail!(
            "`{name}`, a path package of the program, has a build script, whose inputs only cargo knows"
        );
    }
    // A `build.rs` cargo finds by itself, which the manifests do not name.
    let scripts: Vec<PathBuf> = project.package_dirs.iter().map(|d| d.join("build.rs")).collect();
    if let Some(script) = scripts.iter().find(|s| s.exists()) {
        bail!("{} is a build script, whose inputs only cargo knows", script.display());
    }
    let images = state(&record_path(project));
    if images.is_none() {
        bail!("the device images are not recorded");
    }
    // The units built for the host itself (proc-macros, build scripts) are under
    // `host/release`, beside those of the target.
    let release_dirs =
        [crate::host::release_dir(project), project.build_dir.join("host").join("release")];
    if let Some(messages) = kept_messages(&release_dirs) {
        bail!("cargo keeps compiler messages to show again ({})", messages.display());
    }
    let package_dir = project.manifest.parent().unwrap_or(Path::new("/"));
    // (`src/bin` and `examples` are the images' record's: a program that appears there is in
    // the package's list of programs when the images are found fresh.)
    let mut inputs = vec![package_dir.to_path_buf(), package_dir.join("src")];
    // Each missing: one that appears is a change.
    inputs.extend(scripts);
    inputs.extend(watched_files(&release_dirs)?);
    let mut outputs = Vec::new();
    for program in programs {
        let mut dep_info = program.clone().into_os_string();
        dep_info.push(".d");
        let dep_info = PathBuf::from(dep_info);
        inputs.extend(dep_info_inputs(&dep_info)?);
        outputs.push(program.clone());
        outputs.push(dep_info);
    }
    inputs.sort();
    inputs.dedup();
    let record = HostRecord {
        format: FORMAT,
        images,
        command: command.to_owned(),
        started: nanos_since_1970(started),
        inputs: files(inputs),
        outputs: files(outputs),
    };
    write_record(&host_record_path(project), &record)
}

/// A file of compiler messages cargo keeps to show again on a build that finds its unit fresh:
/// `output-<target>` in a unit's fingerprint folder (`<package>-<hash>`) under one of
/// `release_dirs`. A unit that another of the same package and target superseded (one built
/// later, with other flags) does not count: cargo shows the messages of the units it builds.
fn kept_messages(release_dirs: &[PathBuf]) -> Option<PathBuf> {
    let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let package = |unit: &Path| {
        let name = unit.file_name()?.to_str()?;
        Some(name.rsplit_once('-').map_or(name, |(package, _)| package).to_owned())
    };
    for dir in release_dirs {
        let Ok(units) = std::fs::read_dir(dir.join(".fingerprint")) else { continue };
        let units: Vec<PathBuf> = units.filter_map(|u| Some(u.ok()?.path())).collect();
        for unit in &units {
            let Ok(files) = std::fs::read_dir(unit) else { continue };
            for file in files.filter_map(|f| Some(f.ok()?.path())) {
                let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                let Some(target) = name.strip_prefix("output-") else { continue };
                let built = modified(&unit.join(target));
                let superseded = units.iter().any(|other| {
                    other != unit
                        && package(other) == package(unit)
                        && modified(&other.join(target)) > built
                });
                if !superseded {
                    return Some(file);
                }
            }
        }
    }
    None
}

/// The files the build scripts of the program's graph watch (`cargo:rerun-if-changed=` in
/// their output under `release_dirs`) by an absolute path, which cargo compares and the record
/// must too. A relative path lies in the script's own package: a registry's or a git
/// checkout's, which do not change (a path package with a build script is not recorded). One
/// that names a folder is an error: cargo looks at every file in it.
fn watched_files(release_dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut watched = Vec::new();
    for dir in release_dirs {
        let Ok(units) = std::fs::read_dir(dir.join("build")) else { continue };
        for unit in units.filter_map(|u| Some(u.ok()?.path())) {
            let Ok(output) = std::fs::read_to_string(unit.join("output")) else { continue };
            for line in output.lines() {
                let Some(path) = line
                    .strip_prefix("cargo::rerun-if-changed=")
                    .or_else(|| line.strip_prefix("cargo:rerun-if-changed="))
                else {
                    continue;
                };
                let path = PathBuf::from(path);
                if path.is_absolute() {
                    if path.is_dir() {
                        bail!(
                            "a build script ({}) watches the folder {}",
                            unit.display(),
                            path.display()
                        );
                    }
                    watched.push(path);
                }
            }
        }
    }
    Ok(watched)
}

/// The digest of a command, as the record compares it.
fn command_hash(display: &str) -> String {
    Digest::new().part(display).hex()
}

/// What the record is checked and written with: the digest of the host program's cargo command
/// `cmd`, as a build without --verbose runs it (cargo's output is not what it makes), which
/// `make` makes again under the configuration of such a build. `None` where the record is
/// neither looked at nor written: in a dry run (whose plan is every step) and where the images
/// are not `held` (no record of them either).
pub(crate) fn recorded_command(
    config: &Config,
    held: bool,
    cmd: &Cmd,
    make: impl FnOnce(&Config) -> Result<Cmd>,
) -> Result<Option<String>> {
    if config.runner.dry_run || !held {
        return Ok(None);
    }
    if !config.runner.verbose {
        return Ok(Some(command_hash(&cmd.display())));
    }
    let runner = Runner { verbose: false, ..config.runner.clone() };
    let quiet = Config { runner, ..config.clone() };
    Ok(Some(command_hash(&make(&quiet)?.display())))
}
