//! `x.py bench [saxpy] [--reps R] [--out DIR]` (x.py runs this harness, and `x.py bundle` has it
//! add the benchmarks to the bundle): our saxpy benchmark (benches/saxpy) measured side
//! by side with its anchors, CUDA by hand and clang's OpenMP offload, on an NVIDIA GPU. (`x.py
//! bench workloads`: the kernel workloads beside CUDA by hand, CUB and cuBLAS: workloads.rs;
//! `x.py bench build`: the build time of examples/saxpy beside a stock build, here: build_time.rs.)
//!
//! On a machine with cargo it builds and bundles (build/gpu-bundle, which then also carries the
//! benchmark and the anchors' sources) and measures only if there is a GPU; on a GPU machine
//! without Rust, `./run-on-gpu.sh bench` measures with what the bundle carries. The report: a
//! markdown table of medians, ratios and targets on stdout and in `results.md`, every sample in
//! `results.json`, `chart.svg`, and each run's output in `logs/`, all in build/bench.

mod anchor_clang;
mod anchors;
mod build_time;
mod chart;
mod measure;
mod parse;
mod report;
mod workloads;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, bail};
use clap::Parser;
use serde::Serialize;

use self::anchors::Anchor;
use self::measure::{MODES, Programs};
use self::report::{Mode, Row, Series};
use offload_bootstrap::config::Config;
use offload_bootstrap::programs::{self, Flavor};
use offload_bootstrap::tools::{self, Tools};
use offload_bootstrap::{bundle, shell};

/// Our benchmark's package and binary.
const PACKAGE: &str = "benches/saxpy";
const BINARY: &str = "saxpy-bench";
const BUNDLE: &str = "build/gpu-bundle";
const DEFAULT_OUT: &str = "build/bench";
const DEFAULT_REPS: u64 = 5;
/// What `x.py bench` measures.
#[derive(Debug, PartialEq, Eq, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Bench {
    /// benches/saxpy beside CUDA by hand and clang OpenMP, on an NVIDIA GPU (build/bench).
    Saxpy,
    /// benches/workloads beside CUDA by hand, CUB and cuBLAS, on an NVIDIA GPU
    /// (build/bench-workloads).
    Workloads,
    /// The build time of examples/saxpy beside a stock cargo build, here (build/bench-build).
    Build,
}

/// `./x.py bench`'s command line.
#[derive(Parser, Debug)]
#[command(
    name = "./x.py bench",
    bin_name = "./x.py bench",
    about = "Measure: saxpy beside CUDA by hand and clang OpenMP, or the kernel workloads beside \
             CUDA by hand, CUB and cuBLAS (on an NVIDIA GPU: bundled here, measured where there is \
             one, with ./run-on-gpu.sh bench there); or the build time of examples/saxpy, here"
)]
struct Cli {
    /// What to measure.
    #[arg(value_enum, default_value = "saxpy")]
    bench: Bench,
    /// Runs of each program.
    #[arg(long, default_value_t = DEFAULT_REPS, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Where the report goes (default: build/bench, build/bench-workloads, build/bench-build).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The problem sizes of `bench saxpy`, f32 per array (K = 2^10, M = 2^20): e.g. 4096,64K,16M
    /// [default: 64M,4096]
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = parse_size)]
    sizes: Vec<u64>,
    /// Add the benchmarks' programs and anchors to the bundle being made in DIR (`x.py bundle`).
    #[arg(long, value_name = "DIR", hide = true)]
    bundle_into: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("offload: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let root = offload_bootstrap::repo_root()?;
    let config = Config::load(&root)?;
    if let Some(out) = cli.bundle_into {
        // `x.py bundle` built the tools before it asked.
        return add_to_bundle(&root, &config, &tools::built(&root), &out);
    }
    let options =
        Options { bench: cli.bench, reps: cli.reps as usize, out: cli.out, sizes: cli.sizes };
    bench(&root, &config, &options, offload_bootstrap::prepare)
}

/// What to measure, and how.
#[derive(Debug, PartialEq)]
pub(crate) struct Options {
    pub(crate) bench: Bench,
    pub(crate) reps: usize,
    pub(crate) out: Option<PathBuf>,
    /// `bench saxpy`'s problem sizes; none: [`MODES`]'s.
    pub(crate) sizes: Vec<u64>,
}

/// A problem size of `--sizes`: a count of f32, or of 2^20 of them with `M` (`16M`).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let (digits, unit) = if let Some(digits) = text.strip_suffix(['M', 'm']) {
        (digits, 1u64 << 20)
    } else if let Some(digits) = text.strip_suffix(['K', 'k']) {
        (digits, 1 << 10)
    } else {
        (text, 1)
    };
    let count: u64 =
        digits.parse().map_err(|_| format!("`{text}` is not a size (4096, 64K, 16M)"))?;
    match count.checked_mul(unit) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("`{text}`: a size is at least 1 and fits in 64 bits")),
    }
}

/// The modes `sizes` asks for: [`MODES`]'s K, launches and pairs at each size (once each, in
/// the order given), or [`MODES`].
fn modes(sizes: &[u64]) -> Vec<Mode> {
    if sizes.is_empty() {
        return MODES.to_vec();
    }
    let mut modes: Vec<Mode> = Vec::new();
    for &n in sizes {
        if !modes.iter().any(|m| m.n == n) {
            modes.push(Mode { n, ..MODES[0] });
        }
    }
    modes
}

/// `x.py bench`. `prepare` is what every command that builds runs first (main.rs).
pub(crate) fn bench(
    root: &Path,
    config: &Config,
    options: &Options,
    prepare: fn(&Path, &Config) -> Result<Tools>,
) -> Result<()> {
    let have_cargo = tools::have_cargo();
    if !options.sizes.is_empty() && options.bench != Bench::Saxpy {
        bail!("--sizes is for `./x.py bench saxpy`");
    }
    if options.bench == Bench::Build {
        if !have_cargo {
            bail!("`./x.py bench build` builds with cargo, which is not on PATH here");
        }
        let tools = prepare(root, config)?;
        let out = options.out.clone().unwrap_or_else(|| root.join(build_time::DEFAULT_OUT));
        return build_time::bench_build(root, config, &tools, options.reps, &out);
    }
    // Where the programs are: the bundle made here, or the bundle this is (a GPU machine).
    let dir = if have_cargo {
        if !root.join(PACKAGE).join("Cargo.toml").is_file() {
            bail!("no {PACKAGE}/Cargo.toml: the benchmark is missing");
        }
        let anchors = anchors::sources(root);
        if !anchors.is_dir() {
            bail!(
                "no {}: the anchors' sources live in shared/anchors beside the repository",
                anchors.display()
            );
        }
        let tools = prepare(root, config)?;
        bundle::bundle(root, config, &tools, |out| add_to_bundle(root, config, &tools, out))?;
        root.join(BUNDLE)
    } else {
        root.to_path_buf()
    };
    let gpu = shell::runner()
        .capture(Command::new("nvidia-smi").arg("-L"))
        .ok()
        .filter(|o| o.status.success());
    let Some(gpu) = gpu else {
        if !have_cargo {
            bail!("no NVIDIA GPU here (nvidia-smi -L fails)");
        }
        let clang = anchors::clang(&dir.join(anchors::DIR));
        let (what, command, out, sizes) = match options.bench {
            Bench::Workloads => ("workloads", " workloads", workloads::DEFAULT_OUT, ""),
            _ => ("saxpy", "", DEFAULT_OUT, " [--sizes N,...]"),
        };
        println!(
            "bench: the bundle is ready in {} ({BINARY}, {}, the anchors' sources; clang OpenMP anchor {}).\n\
             There is no NVIDIA GPU here (nvidia-smi -L fails): copy that folder to the GPU machine and run there\n  \
             ./run-on-gpu.sh bench{command} [--reps R] [--out DIR]{sizes}\n\
             It builds the {what} anchor with nvcc, measures, and writes results.md, results.json and chart.svg to {out} in the bundle.",
            dir.display(),
            workloads::BINARY,
            clang.describe()
        );
        return Ok(());
    };
    eprintln!("x: {}", String::from_utf8_lossy(&gpu.stdout).trim());
    if options.bench == Bench::Workloads {
        let out = options.out.clone().unwrap_or_else(|| root.join(workloads::DEFAULT_OUT));
        return workloads::measure_and_report(&dir, config, options.reps, &out);
    }
    let out = options.out.clone().unwrap_or_else(|| root.join(DEFAULT_OUT));
    measure_and_report(&dir, config, options.reps, &modes(&options.sizes), &out)
}

/// Adds the benchmark to a bundle being made in `out`: builds benches/saxpy for the GPU, copies
/// its binary and manifest, the anchors' sources, and the clang anchor where it can be built.
/// Without benches/saxpy or the anchors' sources, the bundle goes without a benchmark.
pub(crate) fn add_to_bundle(root: &Path, config: &Config, tools: &Tools, out: &Path) -> Result<()> {
    let package = root.join(PACKAGE);
    if !package.join("Cargo.toml").is_file() || !anchors::sources(root).is_dir() {
        eprintln!(
            "x: bundle: no {PACKAGE} or no ../shared/anchors: the bundle carries no benchmark"
        );
        return Ok(());
    }
    programs::build(root, tools, config, &package, Flavor::GpuOnly)?;
    bundle::copy(root, &Flavor::GpuOnly.bin_dir(root).join(BINARY), out)?;
    bundle::copy(root, &package.join("Cargo.toml"), out)?;
    let workloads = root.join(workloads::PACKAGE);
    programs::build(root, tools, config, &workloads, Flavor::Sm90a)?;
    bundle::copy(root, &Flavor::Sm90a.bin_dir(root).join(workloads::BINARY), out)?;
    bundle::copy(root, &workloads.join("Cargo.toml"), out)?;
    let clang = anchors::add_to_bundle(root, &out.join(anchors::DIR))?;
    eprintln!(
        "x: bundle: {BINARY} and the anchors' sources; clang OpenMP anchor {}",
        clang.describe()
    );
    Ok(())
}

/// Everything results.json holds.
#[derive(Serialize)]
struct Results {
    date: String,
    device: String,
    reps: usize,
    modes: Vec<Mode>,
    anchors: AnchorStatus,
    series: Vec<Series>,
    rows: Vec<Row>,
}

#[derive(Serialize)]
struct AnchorStatus {
    cuda: String,
    clang: String,
}

/// Measures with the programs of the bundle in `dir`, then writes and prints the report.
fn measure_and_report(
    dir: &Path,
    config: &Config,
    reps: usize,
    modes: &[Mode],
    out: &Path,
) -> Result<()> {
    let ours = Flavor::GpuOnly.bin_dir(dir).join(BINARY);
    if !ours.is_file() {
        bail!("no {} (make the bundle with ./x.py bench on a machine with cargo)", ours.display());
    }
    let anchors_dir = dir.join(anchors::DIR);
    let programs = Programs {
        ours,
        cuda: anchors::build_cuda(config, &anchors_dir),
        clang: anchors::clang(&anchors_dir),
    };
    for (name, anchor) in [("CUDA by hand", &programs.cuda), ("clang OpenMP", &programs.clang)] {
        eprintln!("x: bench: {name} anchor {}", anchor.describe());
    }
    let logs = out.join("logs");
    if logs.exists() {
        std::fs::remove_dir_all(&logs).with_context(|| format!("clearing {}", logs.display()))?;
    }
    let measured = measure::measure(&programs, modes, reps, &logs)?;
    let rows = report::rows(modes, &measured.series);
    let results = Results {
        date: utc_now(),
        device: measured.device.unwrap_or_else(|| "unknown device".into()),
        reps,
        modes: modes.to_vec(),
        anchors: AnchorStatus { cuda: status(&programs.cuda), clang: status(&programs.clang) },
        series: measured.series,
        rows,
    };
    write_report(out, &logs, &results, &markdown(&results), |svg| {
        chart::write_svg(svg, &results.rows, &chart_title(&results))
    })
}

/// Writes a benchmark's report into `out` (results.json, results.md, and chart.svg drawn by
/// `chart`), prints the table, and says where each file is.
pub(crate) fn write_report(
    out: &Path,
    logs: &Path,
    results: &impl Serialize,
    text: &str,
    chart: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let (json, md, svg) = (out.join("results.json"), out.join("results.md"), out.join("chart.svg"));
    std::fs::write(&json, serde_json::to_string_pretty(results)? + "\n")
        .with_context(|| format!("writing {}", json.display()))?;
    std::fs::write(&md, text).with_context(|| format!("writing {}", md.display()))?;
    chart(&svg)?;
    println!("{text}");
    println!(
        "bench: {}, {}, {}; each run's output in {}",
        md.display(),
        json.display(),
        svg.display(),
        logs.display()
    );
    Ok(())
}

fn status(anchor: &Anchor) -> String {
    match anchor {
        Anchor::Built(_) => "built".into(),
        Anchor::NotBuilt(reason) => format!("not built: {reason}"),
    }
}

/// results.md: what was measured where, then the table.
fn markdown(results: &Results) -> String {
    let labels: Vec<String> = results.modes.iter().map(Mode::label).collect();
    let first = results.modes.first().copied().unwrap_or(measure::LARGE);
    format!(
        "# saxpy: ours beside CUDA by hand and clang OpenMP\n\n\
         - device: {}; {}\n\
         - medians of {} of each program, interleaved; {} (M = 2^20 f32 per array), K={} saxpy launches, \
           {} empty launches, {} preload pairs of present data\n\
         - CUDA by hand: {}\n\
         - clang OpenMP: {}\n\n\
         {}\n\
         Targets: ours within 5% of CUDA by hand for the preloaded totals and the kernels, within 5% of clang OpenMP for \
         the automatic totals and the preload pair (clang: an `enter data`/`exit data` pair), within 2x of CUDA by hand for an empty synchronous launch. \
         Every sample is in results.json.\n",
        results.device,
        results.date,
        runs(results.reps),
        labels.join(", "),
        first.k,
        first.launches,
        first.pairs,
        results.anchors.cuda,
        results.anchors.clang,
        report::table(&results.rows)
    )
}

fn chart_title(results: &Results) -> String {
    format!(
        "saxpy, ours vs CUDA by hand vs clang OpenMP on {} (medians of {})",
        results.device,
        runs(results.reps)
    )
}

/// `5 runs`, `1 run`.
fn runs(reps: usize) -> String {
    if reps == 1 { "1 run".into() } else { format!("{reps} runs") }
}

/// Now, as `2026-11-30T12:34:56Z`.
pub(crate) fn utc_now() -> String {
    let seconds =
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
    utc(seconds)
}

/// Seconds since the Unix epoch as an ISO 8601 UTC time (days to civil date: Howard Hinnant's
/// `civil_from_days`).
fn utc(seconds: u64) -> String {
    let (days, time) = ((seconds / 86_400) as i64, seconds % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        time / 3600,
        time % 3600 / 60,
        time % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_parses() {
        use clap::CommandFactory as _;
        Cli::command().debug_assert();
        let parse = |line: &str| Cli::try_parse_from(line.split_whitespace());
        let cli = parse("bench workloads --reps 3").unwrap();
        assert_eq!((cli.bench, cli.reps, cli.out, cli.sizes.len()), (Bench::Workloads, 3, None, 0));
        assert_eq!(
            parse("bench saxpy --sizes 4096,1M,16m").unwrap().sizes,
            [4096, 1 << 20, 16 << 20]
        );
        assert!(parse("bench --sizes 0").is_err());
        assert_eq!(parse("bench --sizes 64K,4k").unwrap().sizes, [65536, 4096]);
        assert!(parse("bench --sizes 4G").is_err());
        let cli = parse("bench").unwrap();
        assert_eq!((cli.bench, cli.reps), (Bench::Saxpy, 5));
        assert!(parse("bench --reps 0").is_err());
        assert_eq!(
            parse("bench --bundle-into build/x").unwrap().bundle_into,
            Some("build/x".into())
        );
        let help = parse("bench --help").unwrap_err();
        assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_796_038_496), "2026-11-30T11:34:56Z");
    }

    #[test]
    fn sizes_make_modes_of_the_same_launches() {
        assert_eq!(modes(&[]), MODES);
        let asked = modes(&[4096, 16 << 20, 4096]);
        assert_eq!(asked.iter().map(|m| m.n).collect::<Vec<_>>(), [4096, 16 << 20]);
        assert!(asked.iter().all(|m| (m.k, m.launches, m.pairs) == (50, 1000, 10000)));
        assert_eq!(parse_size("16M"), Ok(16 << 20));
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("4k"), Ok(4096));
        for bad in ["0", "0M", "-1", "1.5M", "M", "K", "1KM", "", "99999999999999M"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn markdown_names_what_was_measured() {
        let results = Results {
            date: "2026-11-30T11:34:56Z".into(),
            device: "NVIDIA H200 (CUDA)".into(),
            reps: 5,
            modes: MODES.to_vec(),
            anchors: AnchorStatus {
                cuda: "built".into(),
                clang: "not built: no clang-19 here".into(),
            },
            series: Vec::new(),
            rows: Vec::new(),
        };
        let text = markdown(&results);
        assert!(text.contains("- device: NVIDIA H200 (CUDA); 2026-11-30T11:34:56Z\n"), "{text}");
        assert!(text.contains("- medians of 5 runs of each program, interleaved;"), "{text}");
        assert!(
            text.contains("N=64M, N=4096 (M = 2^20 f32 per array), K=50 saxpy launches"),
            "{text}"
        );
        assert!(text.contains("- clang OpenMP: not built: no clang-19 here\n"), "{text}");
        assert!(text.contains("| figure | N | ours |"), "{text}");
    }
}
