//! `x.py bench build [--reps R] [--out DIR]`: the build time of examples/saxpy through
//! `cargo offload build`, side by side with a stock `cargo build --release` of the same package.
//!
//! The stock build does rustc's own code generation and link, with the offload markers left
//! unresolved (the program cannot run; only its build time counts). Each build has its own copy
//! of the example. Measured, interleaved, on this machine:
//!
//! - a clean build (ours: the two device images and the host program; the nvptx sysroot is
//!   kept, as for every build after the first of a toolchain), for information: the kernels'
//!   compilation for two targets has no counterpart in the stock build;
//! - a clean build of the program alone, ours with its device images kept (and the unit cache
//!   emptied): what lowering and wrapping add to a clean build (up to three times each);
//! - an edit of host code: a `#[used]` static at the end of `main.rs` whose value changes each
//!   time, so that rustc and offload-ld have new code to compile;
//! - a build with nothing changed (2 s after the last edit, and after one untimed build of each
//!   kind: cargo-offload does not trust a record of a build that started within 2 s of a change,
//!   and runs cargo then);
//! - ours alone: an edit of the kernels file, which rebuilds the device images;
//! - for information, the edit and the unchanged build with cargo-offload started directly, as
//!   `./x.py` starts it, without cargo's subcommand dispatch (a third copy, so that each keeps
//!   its record of device images: the two ways differ in their environment).
//!
//! The report: a table of medians and ratios (target: ours within 10% of stock) on stdout and in
//! `results.md`, every sample in `results.json`, each build's output in `logs/`, in
//! build/bench-build.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use serde::Serialize;

use super::report::{Status, evaluate, median, number};
use offload_bootstrap::config::Config;
use offload_bootstrap::tools::Tools;
use offload_bootstrap::{programs, shell};

const EXAMPLE: &str = "examples/saxpy";
pub(super) const DEFAULT_OUT: &str = "build/bench-build";
/// Ours within this factor of stock.
const FACTOR: f64 = 1.10;
/// What the stock build needs: the offload markers stay unresolved.
const STOCK_RUSTFLAGS: &str = "-Clink-arg=-Wl,--unresolved-symbols=ignore-all";
/// The line each edit rewrites, at the end of the edited file.
const EDIT_MARK: &str = "// x.py bench build: edited";

/// One scenario's samples, in seconds.
#[derive(Serialize, Debug, Default)]
struct Samples {
    ours: Vec<f64>,
    stock: Vec<f64>,
}

#[derive(Serialize, Debug)]
struct Figure {
    figure: &'static str,
    samples: Samples,
    ours: Option<f64>,
    stock: Option<f64>,
    ours_over_stock: Option<f64>,
    /// Whether the target (ours within 10% of stock) is about this figure.
    target: bool,
    status: Status,
}

impl Figure {
    fn new(figure: &'static str, samples: Samples) -> Figure {
        let (ours, stock) = (median(&samples.ours), median(&samples.stock));
        let ours_over_stock = ours.zip(stock).map(|(o, s)| o / s);
        let status = evaluate(ours, stock, FACTOR);
        Figure { figure, samples, ours, stock, ours_over_stock, status, target: true }
    }

    /// A figure shown for what it is: the target is not about it.
    fn without_target(figure: &'static str, samples: Samples) -> Figure {
        Figure { target: false, status: Status::NotApplicable, ..Figure::new(figure, samples) }
    }
}

#[derive(Serialize)]
struct Results {
    date: String,
    machine: String,
    reps: usize,
    figures: Vec<Figure>,
}

/// The two copies of the example and how each is built.
struct Builds {
    ours: PathBuf,
    /// Ours again, cargo-offload started directly as `./x.py` starts it (no cargo dispatch).
    direct: PathBuf,
    stock: PathBuf,
    logs: PathBuf,
    tools_dir: PathBuf,
    config_args: Vec<OsString>,
}

impl Builds {
    /// Runs one build of `which` ("ours", "direct" or "stock"), its output in
    /// `logs/<which>-<label>.log`; returns its time in seconds.
    fn time(&self, which: &str, label: &str) -> Result<f64> {
        let program =
            if which == "direct" { self.tools_dir.join("cargo-offload") } else { "cargo".into() };
        let mut cmd = Command::new(program);
        cmd.env_remove("CARGO_TARGET_DIR").env_remove("RUSTFLAGS");
        if which == "direct" {
            cmd.current_dir(&self.direct).arg("build").args(&self.config_args);
        } else if which == "ours" {
            let path = std::env::join_paths(
                std::iter::once(self.tools_dir.clone())
                    .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
            )?;
            cmd.current_dir(&self.ours)
                .env("PATH", path)
                .args(["offload", "build"])
                .args(&self.config_args);
        } else {
            cmd.current_dir(&self.stock)
                .env("RUSTFLAGS", STOCK_RUSTFLAGS)
                .args(["build", "--release"]);
        }
        let log = self.logs.join(format!("{which}-{label}.log"));
        let start = Instant::now();
        let output = shell::runner().capture(&mut cmd)?;
        let seconds = start.elapsed().as_secs_f64();
        let mut text = format!("{cmd:?}\n");
        text += &String::from_utf8_lossy(&output.stdout);
        text += &String::from_utf8_lossy(&output.stderr);
        std::fs::write(&log, text).with_context(|| format!("writing {}", log.display()))?;
        if !output.status.success() {
            bail!("the {which} build ({label}) failed ({}): see {}", output.status, log.display());
        }
        Ok(seconds)
    }
}

/// Clean builds of the program alone, at most (each takes seconds).
const CLEAN_PROGRAM_REPS: usize = 3;

/// `x.py bench build`.
pub(super) fn bench_build(
    root: &Path,
    config: &Config,
    tools: &Tools,
    reps: usize,
    out: &Path,
) -> Result<()> {
    let example = root.join(EXAMPLE);
    let work = out.join("work");
    let logs = out.join("logs");
    for dir in [&work, &logs] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
    }
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let offload = root.join("library/offload");
    let toolchain = root.join("rust-toolchain.toml");
    let (ours, direct, stock) = (work.join("ours"), work.join("direct"), work.join("stock"));
    for copy in [&ours, &direct, &stock] {
        copy_package(&example, copy, &offload, &toolchain)?;
    }
    let config_args = programs::config_args(config, &config.nvptx.target_cpu);
    let tools_dir =
        tools.cargo_offload.parent().context("cargo-offload has no folder")?.to_path_buf();
    let builds = Builds { ours, direct, stock, logs, tools_dir, config_args };

    eprintln!("x: bench build: clean builds of {EXAMPLE}");
    let clean = Samples {
        ours: vec![builds.time("ours", "clean")?],
        stock: vec![builds.time("stock", "clean")?],
    };
    // The program alone from clean, ours with its device images kept: what lowering and
    // wrapping add to a clean build, without the kernels' own compilation. Several times,
    // alternating: one clean build apart from another reads 0.8x to 1.15x on a shared machine.
    let mut program = Samples::default();
    for rep in 0..reps.min(CLEAN_PROGRAM_REPS) {
        for dir in [
            builds.ours.join("target/offload/host"),
            builds.ours.join("target/offload/ld-cache"),
            builds.stock.join("target"),
        ] {
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("removing {}", dir.display()))?;
            }
        }
        program.ours.push(builds.time("ours", &format!("clean-program-{rep}"))?);
        program.stock.push(builds.time("stock", &format!("clean-program-{rep}"))?);
    }
    // Untimed: the direct copy's first build, and one more of each, the file system's caches
    // warm for all.
    builds.time("direct", "clean")?;
    for which in ["ours", "direct", "stock"] {
        builds.time(which, "warm")?;
    }

    eprintln!(
        "x: bench build: {reps} edits of main.rs, {reps} builds with no change, {reps} edits of the kernels"
    );
    let (mut edit, mut edit_direct) = (Samples::default(), Vec::new());
    for rep in 0..reps {
        for (which, dir, times) in [
            ("ours", &builds.ours, &mut edit.ours),
            ("direct", &builds.direct, &mut edit_direct),
            ("stock", &builds.stock, &mut edit.stock),
        ] {
            mark_edit(&dir.join("src/main.rs"), rep)?;
            times.push(builds.time(which, &format!("edit-main-{rep}"))?);
        }
    }
    // A build with nothing changed comes after the last edit by more than the 2 s within which
    // cargo-offload's records do not trust a file saved before a build (a clock's resolution):
    // a build right after an edit runs cargo, as before (untimed here, for each kind alike).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    for which in ["ours", "direct", "stock"] {
        builds.time(which, "after-edits")?;
    }
    let (mut unchanged, mut unchanged_direct) = (Samples::default(), Vec::new());
    for rep in 0..reps {
        unchanged.ours.push(builds.time("ours", &format!("unchanged-{rep}"))?);
        unchanged_direct.push(builds.time("direct", &format!("unchanged-{rep}"))?);
        unchanged.stock.push(builds.time("stock", &format!("unchanged-{rep}"))?);
    }
    let edit_direct = Samples { ours: edit_direct, stock: edit.stock.clone() };
    let unchanged_direct = Samples { ours: unchanged_direct, stock: unchanged.stock.clone() };
    let mut kernels = Samples::default();
    for rep in 0..reps {
        mark_edit(&builds.ours.join("src/kernels.rs"), rep)?;
        kernels.ours.push(builds.time("ours", &format!("edit-kernels-{rep}"))?);
    }

    let results = Results {
        date: super::utc_now(),
        machine: machine(),
        reps,
        figures: vec![
            Figure::without_target("clean build (ours: with both device images)", clean),
            Figure::new("clean build of the program (ours: device images kept)", program),
            Figure::new("edit of main.rs", edit),
            Figure::new("no change", unchanged),
            Figure::without_target("edit of main.rs, cargo-offload started directly", edit_direct),
            Figure::without_target("no change, cargo-offload started directly", unchanged_direct),
            Figure::new("edit of the kernels (device images rebuilt)", kernels),
        ],
    };
    let text = markdown(&results);
    let (json, md) = (out.join("results.json"), out.join("results.md"));
    std::fs::write(&json, serde_json::to_string_pretty(&results)? + "\n")
        .with_context(|| format!("writing {}", json.display()))?;
    std::fs::write(&md, &text).with_context(|| format!("writing {}", md.display()))?;
    println!("{text}");
    println!(
        "bench build: {}, {}; each build's output in {}",
        md.display(),
        json.display(),
        builds.logs.display()
    );
    Ok(())
}

/// Copies the package's manifest, lockfile and sources to `dest`, its `offload` dependency
/// pointed at `offload`, with the repository's toolchain file.
fn copy_package(package: &Path, dest: &Path, offload: &Path, toolchain: &Path) -> Result<()> {
    let src = dest.join("src");
    std::fs::create_dir_all(&src).with_context(|| format!("creating {}", src.display()))?;
    for entry in std::fs::read_dir(package.join("src"))
        .with_context(|| format!("reading {}", package.display()))?
    {
        let path = entry?.path();
        if path.is_file() {
            std::fs::copy(&path, src.join(path.file_name().unwrap_or_default()))
                .with_context(|| format!("copying {}", path.display()))?;
        }
    }
    let lock = package.join("Cargo.lock");
    if lock.is_file() {
        std::fs::copy(&lock, dest.join("Cargo.lock"))
            .with_context(|| format!("copying {}", lock.display()))?;
    }
    std::fs::copy(toolchain, dest.join("rust-toolchain.toml"))
        .with_context(|| format!("copying {}", toolchain.display()))?;
    let manifest = std::fs::read_to_string(package.join("Cargo.toml"))
        .with_context(|| format!("reading {}/Cargo.toml", package.display()))?;
    let manifest = with_offload_at(&manifest, offload)?;
    std::fs::write(dest.join("Cargo.toml"), manifest)
        .with_context(|| format!("writing {}/Cargo.toml", dest.display()))
}

/// The manifest with its `offload` dependency's path replaced by `offload`.
fn with_offload_at(manifest: &str, offload: &Path) -> Result<String> {
    let mut table: toml::Table =
        manifest.parse().context("the example's Cargo.toml is not TOML")?;
    let dep = table
        .get_mut("dependencies")
        .and_then(|d| d.get_mut("offload"))
        .and_then(|o| o.as_table_mut())
        .context("the example's Cargo.toml has no `offload = { path = ... }` dependency")?;
    dep.insert("path".into(), toml::Value::String(offload.display().to_string()));
    Ok(toml::to_string(&table)?)
}

/// Rewrites the edit line at the end of `file` (appending it the first time): a `#[used]`
/// static whose value is `rep`, new code for rustc and for offload-ld.
fn mark_edit(file: &Path, rep: usize) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    std::fs::write(file, edited(&text, rep)).with_context(|| format!("writing {}", file.display()))
}

fn edited(text: &str, rep: usize) -> String {
    let body = match text.find(EDIT_MARK) {
        Some(at) => &text[..at],
        None => text,
    };
    let newline = if body.ends_with('\n') || body.is_empty() { "" } else { "\n" };
    format!("{body}{newline}{EDIT_MARK}\n#[used]\nstatic X_PY_BENCH_EDIT: u64 = {rep};\n")
}

/// `<cores> cores, <model>` from /proc/cpuinfo where it can be read.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("model name")?.split_once(':').map(|(_, m)| m.trim().to_owned())
            })
        })
        .unwrap_or_else(|| "unknown processor".into());
    format!("{cores} cores, {model}")
}

/// results.md: what was measured where, then the table.
fn markdown(results: &Results) -> String {
    let mut table = String::from(
        "| build | ours (median, range) | stock (median, range) | ours/stock | target | |\n\
         |---|---:|---:|---:|---|---|\n",
    );
    for f in &results.figures {
        let show = |samples: &[f64], median: Option<f64>| match median {
            None => "n/a".to_owned(),
            Some(m) if samples.len() == 1 => format!("{} s", number(m)),
            Some(m) => {
                let lo = samples.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                format!("{} s ({}-{})", number(m), number(lo), number(hi))
            }
        };
        let (target, status) = if f.target && f.stock.is_some() {
            (format!("<= {FACTOR:.2}x stock"), f.status.text())
        } else {
            ("n/a".to_owned(), "n/a")
        };
        table += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            f.figure,
            show(&f.samples.ours, f.ours),
            show(&f.samples.stock, f.stock),
            f.ours_over_stock.map_or("n/a".to_owned(), |r| format!("{r:.2}x")),
            target,
            status
        );
    }
    format!(
        "# Build time of {EXAMPLE}: `cargo offload build` beside stock `cargo build --release`\n\n\
         - machine: {}; {}\n\
         - {} interleaved builds of each kind but the clean ones (one whole, up to {CLEAN_PROGRAM_REPS} of the program alone); stock leaves the offload markers unresolved \
         (`{STOCK_RUSTFLAGS}`) and cannot run\n\n\
         {table}\n\
         Every sample is in results.json.\n",
        results.machine, results.date, results.reps
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_rewrites_its_own_line_only() {
        let once = edited("fn main() {}", 0);
        assert_eq!(
            once,
            format!("fn main() {{}}\n{EDIT_MARK}\n#[used]\nstatic X_PY_BENCH_EDIT: u64 = 0;\n")
        );
        let twice = edited(&once, 7);
        assert_eq!(
            twice,
            format!("fn main() {{}}\n{EDIT_MARK}\n#[used]\nstatic X_PY_BENCH_EDIT: u64 = 7;\n")
        );
    }

    #[test]
    fn the_copy_depends_on_the_repository_library() {
        let manifest = "[package]\nname = \"saxpy\"\n\n[dependencies]\noffload = { path = \"../../library/offload\" }\n";
        let text = with_offload_at(manifest, Path::new("/repo/library/offload")).unwrap();
        let table: toml::Table = text.parse().unwrap();
        assert_eq!(
            table["dependencies"]["offload"]["path"].as_str(),
            Some("/repo/library/offload")
        );
        assert_eq!(table["package"]["name"].as_str(), Some("saxpy"));
        assert!(with_offload_at("[package]\nname = \"x\"\n", Path::new("/o")).is_err());
    }

    #[test]
    fn the_table_has_ratios_and_targets() {
        let results = Results {
            date: "2026-11-30T11:34:56Z".into(),
            machine: "2 cores, a processor".into(),
            reps: 2,
            figures: vec![
                Figure::new(
                    "edit of main.rs",
                    Samples { ours: vec![0.52, 0.54], stock: vec![0.5, 0.5] },
                ),
                Figure::new(
                    "no change",
                    Samples { ours: vec![0.07, 0.08], stock: vec![0.06, 0.06] },
                ),
                Figure::new("edit of the kernels", Samples { ours: vec![3.0], stock: vec![] }),
                Figure::without_target(
                    "clean build",
                    Samples { ours: vec![20.0], stock: vec![10.0] },
                ),
            ],
        };
        let text = markdown(&results);
        assert!(text.contains("| edit of main.rs | 0.530 s (0.520-0.540) | 0.500 s (0.500-0.500) | 1.06x | <= 1.10x stock | met |"), "{text}");
        assert!(text.contains("| no change | 0.075 s (0.070-0.080) | 0.060 s (0.060-0.060) | 1.25x | <= 1.10x stock | not met |"), "{text}");
        assert!(
            text.contains("| edit of the kernels | 3.000 s | n/a | n/a | n/a | n/a |"),
            "{text}"
        );
        assert!(text.contains("| clean build | 20.00 s | 10.00 s | 2.00x | n/a | n/a |"), "{text}");
    }
}
