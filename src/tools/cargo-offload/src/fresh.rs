//! The record of the last device image build. Where nothing the images were made from changed, a
//! build goes straight to the host program: no `cargo metadata`, no cargo run per image.
//!
//! Those runs only find the images fresh after an edit of host code, and cost 0.1 s of each
//! build (two or three cargo processes, one after the other); this check costs some stat calls.
//! It holds only where all of these are as the record has them:
//!
//! - the key: cargo-offload's own binary, the options that shape the images, the working folder,
//!   and the whole environment but the variables of shells, terminals and make's jobserver (as a
//!   digest: values may be secrets; `offload_support::digest`, the same from one Rust release
//!   to the next);
//! - the inputs: the files cargo's dep-info lists for each image (the kernels and `offload`), the
//!   manifests of the package and of its path dependencies and every `Cargo.toml` above them
//!   (a workspace they inherit from), the lockfile, cargo's configuration files and the
//!   toolchain files from the working and the package's folders up, rustup's settings, the
//!   package's `src/bin` and `examples` and their subfolders, and the tools: the toolchain's
//!   rustc and libraries (whatever `RUSTC` names), its nvptx64 libraries where it has them,
//!   ptxas, the nvptx sysroot;
//! - whether the package has a `src/main.rs`, and whether it and its path packages have a
//!   `build.rs`;
//! - the outputs: the images and the files made beside them.
//!
//! A file is compared by size and modification time, and one that was missing must still be
//! missing. An input must also be older than the start of the build that wrote the record, by a
//! margin wider than a file system's clock: a file saved while cargo read it could otherwise pass
//! for what cargo read. A failed check says why under `--verbose`, and the build runs as before.
//!
//! Nothing is recorded where the record could not see every input: a dep-info source that does
//! not exist (a path the parser misread), a cargo configuration file that includes others, a
//! path package in `offload`'s dependencies with a build script (whose inputs cargo alone
//! knows). A package that became a workspace member may have an old record in its own target
//! folder beside the workspace's: the first record that holds is used.

use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context as _, Result, bail};
use offload_support::digest::Digest;
use offload_support::toolchain;
use serde::{Deserialize, Serialize};

use self::dep_info::dep_info_inputs;
use crate::cargo_files;
use crate::command::Runner;
use crate::config::Config;
use crate::devices::BuiltImages;
use crate::image::Image;
use crate::project::Project;

/// Bumped when the record's meaning changes (3: the key is a blake3 digest; the records of
/// earlier versions, named by another hash, are not found).
const FORMAT: u32 = 3;

/// How much older than the build an input must be (coarse file system clocks round down).
const MARGIN: Duration = Duration::from_secs(2);

/// Variables of shells and terminals, and make's jobserver: they change from one shell (or one
/// run) to the next and shape no build.
const UNSHAPING_VARIABLES: &[&str] = &[
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MAKELEVEL",
    "MFLAGS",
    // rustup's count of its own nesting: one more under cargo than from a shell.
    "RUST_RECURSION_COUNT",
    "_",
    "COLUMNS",
    "HISTCONTROL",
    "HISTFILE",
    "HISTSIZE",
    "LINES",
    "LS_COLORS",
    "OLDPWD",
    "PS1",
    "PS2",
    "PWD",
    "SHLVL",
    "SSH_AUTH_SOCK",
    "SSH_CLIENT",
    "SSH_CONNECTION",
    "SSH_TTY",
    "STY",
    "TERM_SESSION_ID",
    "TMUX_PANE",
    "WINDOWID",
];

/// Prefixes of terminals' and editors' own variables.
const UNSHAPING_PREFIXES: &[&str] =
    &["ALACRITTY_", "KITTY_", "TERM_PROGRAM", "VSCODE_", "WEZTERM_", "WT_"];

/// What shapes the images beyond files: cargo-offload's options for them.
#[derive(Serialize)]
pub(crate) struct Options<'a> {
    pub(crate) devices: &'a str,
    pub(crate) target_cpu: &'a str,
    pub(crate) ptxas: Option<&'a Path>,
    pub(crate) features: &'a crate::project::Features,
}

/// A file's size and modification time (nanoseconds since 1970), or `None` where it is missing.
type State = Option<(u64, u64)>;

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct File {
    path: PathBuf,
    state: State,
}

#[derive(Serialize, Deserialize, Debug)]
struct ImageRecord {
    triple: String,
    path: PathBuf,
}

/// A path of which only whether it exists counts.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Presence {
    path: PathBuf,
    exists: bool,
}

#[derive(Serialize, Deserialize, Debug)]
struct Record {
    format: u32,
    /// The package's manifest, its links resolved: what names the record.
    manifest: PathBuf,
    key: String,
    /// When the build that wrote the record started (nanoseconds since 1970).
    started: u64,
    project: Project,
    images: Vec<ImageRecord>,
    inputs: Vec<File>,
    presence: Vec<Presence>,
    outputs: Vec<File>,
}

/// Where a check found the images: fresh, with the package they belong to and a shared hold on
/// them, or not, and why.
enum Check {
    Fresh(Box<Project>, Vec<Image>, Hold),
    Stale(String),
}

/// A lock on a package's images, released when dropped (or when the process ends, however it
/// ends). A build that uses recorded images holds it shared until its host program is linked;
/// one that builds them holds it alone from before the images build until its host program is
/// linked. So no build reads images that another rewrites, nor records what another wrote.
pub(crate) struct Hold(#[allow(dead_code, reason = "held for its lock")] std::fs::File);

impl Hold {
    fn open(record: &Path) -> Result<std::fs::File> {
        let path = record.with_extension("lock");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))
    }

    /// Locks `file`, shared or alone; where another build holds it, says so and waits.
    fn lock(file: std::fs::File, shared: bool, whose: &dyn std::fmt::Display) -> Result<Hold> {
        let tried = if shared { file.try_lock_shared() } else { file.try_lock() };
        match tried {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                eprintln!("offload: waiting for another build of the device images of {whose}");
                let locked = if shared { file.lock_shared() } else { file.lock() };
                locked.context("locking the record of the device images")?;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).context("locking the record of the device images");
            }
        }
        Ok(Hold(file))
    }

    /// The images of `project`, held alone: before they are built and recorded.
    fn alone(project: &Project) -> Result<Hold> {
        Hold::lock(Hold::open(&record_path(project))?, false, &project.name)
    }
}

/// The package at `manifest` (as `check` finds it) and its device images, with the hold on
/// them: those of the last build where its record holds, held shared; else `load` reads the
/// package (and finds the rustc of its toolchain) and `build` makes the images, held alone from
/// before they build, then recorded where they are those asked for. A dry run (whose plan is
/// every step) checks, holds and records nothing.
pub(crate) fn images(
    config: &Config,
    manifest: Option<&Path>,
    options: &Options<'_>,
    load: impl FnOnce() -> Result<(Project, PathBuf)>,
    build: impl FnOnce(&Project, &Path) -> Result<BuiltImages>,
) -> Result<(Project, Vec<Image>, Option<Hold>)> {
    if !config.runner.dry_run {
        match check(manifest, options) {
            Check::Fresh(project, images, hold) => {
                config.status(&format!("the device images of {} are up to date", project.name));
                return Ok((*project, images, Some(hold)));
            }
            Check::Stale(why) if config.runner.verbose => {
                eprintln!("offload: building the device images: {why}");
            }
            Check::Stale(_) => {}
        }
    }
    let since = Instant::now();
    let (project, rustc) = load()?;
    if config.runner.dry_run {
        let built = build(&project, &rustc)?;
        return Ok((project, built.images, None));
    }
    // Taken once the target folder is known, counted from before the package was read.
    let started = build_started(&project, since);
    // Where the lock cannot be had (a file system without locks), nothing is recorded.
    let hold = Hold::alone(&project)
        .inspect_err(|e| {
            if config.runner.verbose {
                eprintln!("offload: the device images are not recorded: {e:#}");
            }
        })
        .ok();
    forget(&project)?;
    let built = build(&project, &rustc)?;
    // Without ptxas, `auto` builds the host-offload image alone, and says so on every build
    // until ptxas is installed: no record.
    if built.as_asked && hold.is_some() {
        let recorded = record(&config.runner, &project, &built.images, options, &rustc, started);
        if let Err(e) = recorded
            && config.runner.verbose
        {
            eprintln!("offload: the device images are not recorded: {e:#}");
        }
    }
    Ok((project, built.images, hold))
}

/// The record of the package whose manifest is `manifest` (`--manifest-path`, else the nearest
/// Cargo.toml from the working folder up, as cargo finds it), if it holds.
fn check(manifest: Option<&Path>, options: &Options<'_>) -> Check {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty());
    check_in(manifest, options, target_dir.as_deref().map(Path::new))
}

/// [`check`], with `CARGO_TARGET_DIR` given.
fn check_in(manifest: Option<&Path>, options: &Options<'_>, target_dir: Option<&Path>) -> Check {
    match try_check(manifest, options, target_dir) {
        Ok(found) => found,
        Err(e) => Check::Stale(format!("{e:#}")),
    }
}

fn try_check(
    manifest: Option<&Path>,
    options: &Options<'_>,
    target_dir: Option<&Path>,
) -> Result<Check> {
    let manifest = match manifest {
        Some(m) => m.to_path_buf(),
        None => nearest_manifest()?,
    };
    let manifest = manifest.canonicalize().with_context(|| format!("{}", manifest.display()))?;
    // A package that became a workspace's member has its record in the workspace's target
    // folder, and maybe an old one in its own: the first that holds counts.
    let mut first_why = None;
    for path in record_candidates(&manifest, target_dir).into_iter().filter(|p| p.is_file()) {
        match check_record(&path, &manifest, options) {
            Ok(Check::Fresh(project, images, hold)) => {
                return Ok(Check::Fresh(project, images, hold));
            }
            Ok(Check::Stale(why)) => first_why = first_why.or(Some(why)),
            Err(e) => first_why = first_why.or(Some(format!("{e:#}"))),
        }
    }
    Ok(Check::Stale(first_why.unwrap_or_else(|| "no record of an earlier build".into())))
}

/// The record at `path`, checked.
fn check_record(path: &Path, manifest: &Path, options: &Options<'_>) -> Result<Check> {
    // Shared: a build that holds it alone is writing the images; what it records is read after.
    let hold = Hold::lock(Hold::open(path)?, true, &manifest.display())?;
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let record: Record = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a record of this version", path.display()))?;
    let why = if record.format != FORMAT {
        Some("a record of another version".to_owned())
    } else if record.manifest != manifest {
        Some(format!("the record is of {}", record.manifest.display()))
    } else if path.parent().and_then(Path::parent) != Some(record.project.build_dir.as_path()) {
        Some("the record is of another target folder".to_owned())
    } else if record.key != key(options)? {
        Some("the environment, the options or cargo-offload changed".to_owned())
    } else {
        changed_file(&record)
    };
    if let Some(why) = why {
        return Ok(Check::Stale(why));
    }
    let images = record
        .images
        .iter()
        .map(|i| Image::recorded(&i.triple, i.path.clone()))
        .collect::<Option<Vec<_>>>();
    Ok(match images {
        Some(images) => Check::Fresh(Box::new(record.project), images, hold),
        None => Check::Stale("the record names an unknown target".into()),
    })
}

/// The first file whose state differs from the record's, or an input newer than the build.
fn changed_file(record: &Record) -> Option<String> {
    if let Some(p) = record.presence.iter().find(|p| p.path.exists() != p.exists) {
        let what = if p.exists { "was removed" } else { "appeared" };
        return Some(format!("{} {what}", p.path.display()));
    }
    // What the builds generate under the target folder is compared as it was written.
    let generated = |path: &Path| path.starts_with(&record.project.build_dir);
    first_change(&record.inputs, &record.outputs, record.started, generated, "the images")
}

/// The first of `inputs` and `outputs` whose state differs from the record's, or an input
/// (but those `generated` says the build wrote) newer than the build of `what`, which started
/// at `started` (nanoseconds since 1970), by less than [`MARGIN`].
fn first_change(
    inputs: &[File],
    outputs: &[File],
    started: u64,
    generated: impl Fn(&Path) -> bool,
    what: &str,
) -> Option<String> {
    let started = since_1970(started);
    for (file, input) in inputs.iter().map(|f| (f, true)).chain(outputs.iter().map(|f| (f, false)))
    {
        let now = state(&file.path);
        if now != file.state {
            return Some(format!("{} changed", file.path.display()));
        }
        let young = |(_, modified): (u64, u64)| since_1970(modified) + MARGIN > started;
        if input && !generated(&file.path) && now.is_some_and(young) {
            return Some(format!("{} changed while {what} built", file.path.display()));
        }
    }
    None
}

/// When a build of `project` started (`since`), by the clock of the file system its records
/// lie on, which file times are compared with and which may not be this machine's: the time a
/// new file there is made, less the time since `since`; else this machine's time then.
fn build_started(project: &Project, since: Instant) -> SystemTime {
    let dir = record_path(project).parent().map(Path::to_path_buf).unwrap_or_default();
    let made = std::fs::create_dir_all(&dir)
        .and_then(|()| tempfile::NamedTempFile::new_in(&dir))
        .and_then(|file| file.as_file().metadata()?.modified());
    let elapsed = since.elapsed();
    made.unwrap_or_else(|_| SystemTime::now())
        .checked_sub(elapsed)
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// `time` in nanoseconds since 1970, as records keep it.
fn nanos_since_1970(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The files at `paths` with their states now.
fn files(paths: Vec<PathBuf>) -> Vec<File> {
    paths.into_iter().map(|path| File { state: state(&path), path }).collect()
}

/// Removes the record at `path` (a build that fails must not leave one behind).
fn remove_record(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Writes `record` to `path` whole or not at all (a build that reads it meanwhile sees the old
/// one or the new one).
fn write_record(path: &Path, record: &impl Serialize) -> Result<()> {
    let dir = path.parent().context("the record has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    serde_json::to_writer(&mut file, record).context("writing the record")?;
    file.persist(path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn since_1970(ns: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_nanos(ns)
}

/// Removes the record of `project`, before its images are built again: a build that fails
/// halfway must not leave one behind.
fn forget(project: &Project) -> Result<()> {
    remove_record(&record_path(project))
}

/// Writes the record of images just built by `rustc`, by a build that started at `started`;
/// `runner` asks rustc for its toolchain.
fn record(
    runner: &Runner,
    project: &Project,
    images: &[Image],
    options: &Options<'_>,
    rustc: &Path,
    started: SystemTime,
) -> Result<()> {
    if let Some(name) = project.build_scripts.first() {
        bail!(
            "`{name}`, a path dependency of `offload`, has a build script, whose inputs only cargo knows"
        );
    }
    let mut inputs: Vec<PathBuf> = project.inputs.clone();
    let mut outputs = Vec::new();
    for image in images {
        outputs.push(image.path.clone());
        outputs.extend(image.made.outputs.iter().cloned());
        inputs.extend(image.made.tools.iter().cloned());
        inputs.extend(dep_info_inputs(&image.made.dep_info)?);
    }
    inputs.extend(toolchain_files(runner, rustc)?);
    let cwd = std::env::current_dir().context("reading the working folder")?;
    let package_dir = project.manifest.parent().unwrap_or(Path::new("/"));
    // cargo reads its configuration from the working folder up, rustup its toolchain file from
    // where it runs: the working folder, and the package's folder for `rustup which rustc`.
    let dirs: Vec<&Path> = cwd.ancestors().chain(package_dir.ancestors()).collect();
    for dir in &dirs {
        inputs.push(dir.join("rust-toolchain.toml"));
        inputs.push(dir.join("rust-toolchain"));
    }
    let configs = cargo_files::config_files(dirs);
    for config in &configs {
        // `include` brings in files the record would not know.
        if std::fs::read_to_string(config).is_ok_and(|text| cargo_files::sets_key(&text, "include"))
        {
            bail!("the cargo configuration {} includes other files", config.display());
        }
    }
    inputs.extend(configs);
    // The package's binaries and examples, which `cargo offload run` chooses from and the host
    // program's record lists (fresh/host.rs): cargo finds them in `src/main.rs`,
    // `src/bin/<name>.rs`, `src/bin/<name>/main.rs` and the same under `examples`.
    for programs in [package_dir.join("src").join("bin"), package_dir.join("examples")] {
        if let Ok(entries) = std::fs::read_dir(&programs) {
            inputs.extend(entries.filter_map(|e| Some(e.ok()?.path())).filter(|p| p.is_dir()));
        }
        inputs.push(programs);
    }
    let mut presence = vec![Presence {
        path: package_dir.join("src").join("main.rs"),
        exists: package_dir.join("src").join("main.rs").exists(),
    }];
    // A `build.rs` that appears in a path package is a build script cargo finds without a
    // change of manifest: the packages are read again (one of `offload`'s is not recorded).
    presence.extend(project.package_dirs.iter().map(|dir| {
        let path = dir.join("build.rs");
        Presence { exists: path.exists(), path }
    }));
    if let Some(rustup_home) = cargo_files::home_dir("RUSTUP_HOME", ".rustup") {
        inputs.push(rustup_home.join("settings.toml"));
    }
    inputs.sort();
    inputs.dedup();
    let manifest = canonical(&project.manifest);
    let record = Record {
        format: FORMAT,
        manifest: manifest.clone(),
        key: key(options)?,
        started: nanos_since_1970(started),
        project: project.clone(),
        images: images
            .iter()
            .map(|i| ImageRecord { triple: i.triple.to_owned(), path: i.path.clone() })
            .collect(),
        inputs: files(inputs),
        presence,
        outputs: files(outputs),
    };
    write_record(&record_path(project), &record)
}

/// The digest of what shapes the images beyond files: cargo-offload's binary and the working
/// folder (their bytes: any path will do), the binary's state and the options (as JSON), then
/// each variable's name and value.
fn key(options: &Options<'_>) -> Result<String> {
    let exe = std::env::current_exe().context("finding cargo-offload's own path")?;
    let cwd = std::env::current_dir().context("reading the working folder")?;
    let shape = serde_json::to_vec(&(state(&exe), options)).context("writing the key's options")?;
    let mut digest = Digest::new();
    digest.part(exe.as_os_str().as_bytes()).part(cwd.as_os_str().as_bytes()).part(shape);
    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> =
        std::env::vars_os().filter(|(k, _)| !k.to_str().is_some_and(unshaping)).collect();
    vars.sort();
    for (name, value) in &vars {
        digest.part(name.as_bytes()).part(value.as_bytes());
    }
    Ok(digest.hex())
}

fn unshaping(name: &str) -> bool {
    UNSHAPING_VARIABLES.contains(&name) || UNSHAPING_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The toolchain `rustc` belongs to, as files: its real compiler and libraries (`RUSTC` may name
/// rustup's proxy, or a name on `PATH`), and its nvptx64 libraries, which the nvptx image uses
/// instead of the cached sysroot once they exist.
fn toolchain_files(runner: &Runner, rustc: &Path) -> Result<Vec<PathBuf>> {
    let sysroot = toolchain::sysroot(&runner.queries(), rustc, None)?;
    Ok(vec![
        toolchain::rustc_in(&sysroot),
        sysroot.join("lib"),
        sysroot.join("lib").join("rustlib").join(crate::nvptx::NVPTX_TRIPLE).join("lib"),
    ])
}

/// `path` with its links resolved, or as it is where it cannot be.
fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

fn state(path: &Path) -> State {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    Some((meta.len(), u64::try_from(modified.as_nanos()).ok()?))
}

/// The nearest Cargo.toml from the working folder up.
fn nearest_manifest() -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("reading the working folder")?;
    cwd.ancestors()
        .map(|d| d.join("Cargo.toml"))
        .find(|m| m.is_file())
        .context("no Cargo.toml in the working folder or above it")
}

/// `<build dir>/fresh/<digest of the manifest's real path>.json`.
fn record_path(project: &Project) -> PathBuf {
    project.build_dir.join("fresh").join(record_name(&canonical(&project.manifest)))
}

fn record_name(manifest: &Path) -> String {
    format!("{}.json", Digest::new().part(manifest.as_os_str().as_bytes()).hex())
}

/// Where the record of `manifest` may lie before `cargo metadata` says where the target folder
/// is: under `CARGO_TARGET_DIR`, else in `target/offload` of the package's folder or of a folder
/// above it (a workspace's). A target folder set elsewhere has no record found, and builds as
/// before.
fn record_candidates(manifest: &Path, target_dir: Option<&Path>) -> Vec<PathBuf> {
    let name = record_name(manifest);
    let in_target = |target: PathBuf| target.join("offload").join("fresh").join(&name);
    match target_dir {
        Some(dir) => match std::env::current_dir() {
            Ok(cwd) => vec![in_target(cwd.join(dir))],
            Err(_) => Vec::new(),
        },
        None => manifest.ancestors().skip(1).map(|d| in_target(d.join("target"))).collect(),
    }
}

mod dep_info;
pub(crate) mod host;
#[cfg(test)]
mod tests;
