//! The record of the last build of the host program, beside the device images' record. Where the
//! images' record holds and nothing the host program was built from changed either, a build
//! (or `run`) does not start cargo for the host program at all: cargo would only find it fresh,
//! which costs 20-30 ms, as much as the rest of an unchanged build.
//!
//! It holds only where all of these are as the record has them:
//!
//! - the images' record it was built with (as a file: another build or record of the images is
//!   not this one), which holds for the environment, the options, the manifests, the lockfile,
//!   cargo's configuration and the toolchain (fresh.rs);
//! - the cargo command: its arguments (the examples asked for) and what it sets (rustflags with
//!   the images' stamp, the linker, the runtime);
//! - the inputs: the files cargo's dep-info lists for each program built (the package's sources
//!   and those of its path dependencies: cargo does not list the registry's, which do not
//!   change), and the folders of the package and of its `src` (a file that appears there, such
//!   as a `lib.rs`, changes them; `src/bin` and `examples` are the images' record's);
//! - the outputs: the programs and their dep-info;
//! - no `build.rs` in the folder of the package or of a path package of its graph.
//!
//! Nothing is recorded where cargo would do more than compare files: a path package of the
//! program's graph, or the package itself, has a build script (whose inputs cargo alone
//! knows), or cargo keeps compiler messages to show again (a warning that a build with nothing
//! to do repeats: any `output-*` file among its fingerprints), or a program's dep-info lists a
//! source that does not exist. A build that runs cargo writes the record again once cargo
//! succeeds; a record older than the images' is no record.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};

use super::{
    File, State, dep_info_sources, files, first_change, nanos_since_1970, record_path,
    remove_record, state, write_record,
};
use crate::project::Project;

/// Bumped when the record's meaning changes.
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize, Debug)]
struct HostRecord {
    format: u32,
    /// The images' record the program was linked with, as a file.
    images: State,
    /// The hash of the cargo command.
    command: String,
    /// When the build that wrote the record started (nanoseconds since 1970).
    started: u64,
    inputs: Vec<File>,
    outputs: Vec<File>,
}

/// Where the record of `project`'s host program lies.
fn host_record_path(project: &Project) -> PathBuf {
    record_path(project).with_extension("host.json")
}

/// Why the host program must be built by cargo (`Some`), or `None` where the record holds for
/// the cargo command hashed as `command`.
pub(crate) fn stale(project: &Project, command: &str) -> Option<String> {
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
pub(crate) fn forget(project: &Project) -> Result<()> {
    remove_record(&host_record_path(project))
}

/// Records the host program's build, which cargo ran as `command` from `started`, making
/// `programs` (paths under `crate::host::release_dir`).
pub(crate) fn record(
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
    let fingerprints = crate::host::release_dir(project).join(".fingerprint");
    if let Some(messages) = kept_messages(&fingerprints) {
        bail!("cargo keeps compiler messages to show again ({})", messages.display());
    }
    let package_dir = project.manifest.parent().unwrap_or(Path::new("/"));
    // (`src/bin` and `examples` are the images' record's: a program that appears there is in
    // the package's list of programs when the images are found fresh.)
    let mut inputs = vec![package_dir.to_path_buf(), package_dir.join("src")];
    // Each missing: one that appears is a change.
    inputs.extend(scripts);
    let mut outputs = Vec::new();
    for program in programs {
        let mut dep_info = program.clone().into_os_string();
        dep_info.push(".d");
        let dep_info = PathBuf::from(dep_info);
        let text = std::fs::read_to_string(&dep_info)
            .with_context(|| format!("reading {}", dep_info.display()))?;
        let sources = dep_info_sources(&text).with_context(|| format!("{}", dep_info.display()))?;
        if let Some(missing) = sources.iter().find(|p| !p.exists()) {
            bail!("{} lists {}, which does not exist", dep_info.display(), missing.display());
        }
        inputs.extend(sources);
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

/// A file of compiler messages cargo keeps among its fingerprints, to show again on a build
/// that finds the unit fresh.
fn kept_messages(fingerprints: &Path) -> Option<PathBuf> {
    let units = std::fs::read_dir(fingerprints).ok()?;
    units.filter_map(|unit| std::fs::read_dir(unit.ok()?.path()).ok()).flatten().find_map(|f| {
        let path = f.ok()?.path();
        path.file_name()?.to_str()?.starts_with("output-").then_some(path)
    })
}

/// The hash of a command, as the record compares it.
pub(crate) fn command_hash(display: &str) -> String {
    let mut h = DefaultHasher::new();
    display.hash(&mut h);
    format!("{:016x}", h.finish())
}
