//! Programs built through `cargo offload`: the examples and the run tests, with the runs their
//! `//@ run:` lines ask for and the copies the runtime must report.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, anyhow, bail};

use crate::config::Config;
use crate::sanitize::Sanitizer;
use crate::shell;
use crate::tools::Tools;

/// The package of the programs the gpu suite also runs built for sm_90a (`//@ sm90a`).
pub const SM90A_PACKAGE: &str = "tests/run";

/// Packages whose programs the run suite runs.
pub const RUN_SUITE: &[&str] = &[
    "tests/run",
    "examples/saxpy",
    "examples/jacobi",
    "examples/reduce",
    "examples/cublas",
    "examples/jacobi_mpi",
    "benches/saxpy",
    "benches/workloads",
];

/// One `//@ run: ARGS => h2d=N d2h=M [h2d_bytes=B] [d2h_bytes=B] [present=P] [np=R]
/// [env=KEY=VALUE]...` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    pub args: Vec<String>,
    pub host_to_device: usize,
    pub device_to_host: usize,
    /// Bytes copied each way, in all, when the line gives `h2d_bytes=` / `d2h_bytes=`.
    pub host_to_device_bytes: Option<usize>,
    pub device_to_host_bytes: Option<usize>,
    /// Begin mappers that found their data already mapped, when the line gives `present=`.
    pub present: Option<usize>,
    /// MPI ranks, when the line gives `np=`: the program runs under `mpirun -np R`, and the
    /// copies counted are all the ranks' together.
    pub ranks: Option<usize>,
    /// Environment for this run, over the suite's.
    pub env: Vec<(String, String)>,
}

/// One binary of a package and its runs.
pub struct Program {
    pub source: PathBuf,
    pub binary: PathBuf,
    pub runs: Vec<RunSpec>,
    /// A `//@ tsan` line: the tsan suite runs it under ThreadSanitizer too.
    pub tsan: bool,
    /// A `//@ host-offload` line: it checks the host-offload image itself, so the gpu suite,
    /// whose programs embed the NVIDIA image alone, builds it but does not run it.
    pub host_offload: bool,
    /// A `//@ children-fault` line: the processes it starts fault on purpose, so under
    /// compute-sanitizer only its own process is checked.
    pub children_fault: bool,
    /// `//@ sanitize-expects: CALL` lines: driver calls it makes fail on purpose, whose
    /// compute-sanitizer reports are expected.
    pub sanitize_expects: Vec<String>,
    /// A `//@ sm90a` line: its kernels differ on sm_90a (`wgmma`), so the gpu suite also runs
    /// it built for sm_90a.
    pub sm90a: bool,
}

/// Which images the programs embed, and so where they can run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// The host-offload image and, where ptxas is installed, the NVIDIA one: runs anywhere, on
    /// the GPU where there is one.
    Portable,
    /// The NVIDIA image alone: runs on a GPU or fails, so a pass proves the GPU ran it.
    GpuOnly,
    /// The host-offload image alone, the program, its dependencies and the standard library
    /// built with ThreadSanitizer (the tsan suite).
    Tsan,
    /// The NVIDIA image alone, for sm_90a whatever the configuration says: kernels on Hopper's
    /// `wgmma` (the benchmark's workloads, the ptx suite's arch-specific checks).
    Sm90a,
}

impl Flavor {
    fn devices(self) -> &'static str {
        match self {
            Flavor::Portable => "auto",
            Flavor::GpuOnly | Flavor::Sm90a => "cuda",
            Flavor::Tsan => "host",
        }
    }

    /// The folder the programs of this flavor build in, shared so dependencies build once.
    pub fn target_dir(self, root: &Path) -> PathBuf {
        root.join(match self {
            Flavor::Portable => "target/programs",
            Flavor::GpuOnly => "target/programs-gpu",
            Flavor::Tsan => "target/programs-tsan",
            Flavor::Sm90a => "target/programs-sm90a",
        })
    }

    /// The GPU architecture of its NVIDIA image.
    fn target_cpu(self, config: &Config) -> &str {
        if self == Flavor::Sm90a { "sm_90a" } else { &config.nvptx.target_cpu }
    }

    /// Where the binaries land.
    pub fn bin_dir(self, root: &Path) -> PathBuf {
        self.target_dir(root).join("offload/host/x86_64-unknown-linux-gnu/release")
    }
}

/// The options of `cargo offload build` that `x.py`'s configuration sets: the ABI, the GPU
/// architecture (`cpu`), the runtime's folder and, where configured, ptxas.
pub fn config_args(config: &Config, cpu: &str) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "--abi".into(),
        (&config.runtime.abi).into(),
        "--target-cpu".into(),
        cpu.into(),
        "--runtime-dir".into(),
        config.runtime.dir.clone().into(),
    ];
    if let Some(ptxas) = &config.nvptx.ptxas {
        args.extend(["--ptxas".into(), ptxas.clone().into()]);
    }
    args
}

/// Builds a package with `cargo offload build`.
pub fn build(
    root: &Path,
    tools: &Tools,
    config: &Config,
    package: &Path,
    flavor: Flavor,
) -> Result<()> {
    let mut cmd = Command::new(&tools.cargo_offload);
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(package.join("Cargo.toml"))
        .args(["--devices", flavor.devices()])
        .args(config_args(config, flavor.target_cpu(config)))
        .env("CARGO_TARGET_DIR", flavor.target_dir(root));
    if flavor == Flavor::Tsan {
        // The standard library is rebuilt instrumented (from rust-src), or ThreadSanitizer
        // reports its synchronisation as races. The host-offload image is instrumented too and
        // finds the sanitizer's runtime in the program, which exports its symbols.
        let user = std::env::var("RUSTFLAGS").unwrap_or_default();
        cmd.env("CARGO_UNSTABLE_BUILD_STD", "std,panic_abort")
            .env("RUSTFLAGS", format!("{user} -Zsanitizer=thread -Clink-arg=-rdynamic"));
    }
    shell::runner().run(&format!("cargo offload build of {}", package.display()), &mut cmd)
}

/// The binaries of a package (`src/main.rs`, `src/bin/*.rs`) with their `//@ run:` lines.
pub fn programs(root: &Path, package: &Path, flavor: Flavor) -> Result<Vec<Program>> {
    let name = package_name(package)?;
    let out = flavor.bin_dir(root);
    let mut sources: Vec<(PathBuf, String)> = Vec::new();
    let main = package.join("src/main.rs");
    if main.is_file() {
        sources.push((main, name));
    }
    if let Ok(dir) = std::fs::read_dir(package.join("src/bin")) {
        let mut bins: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        bins.sort();
        for b in bins {
            let stem = b.file_stem().unwrap_or_default().to_string_lossy().into_owned();
            sources.push((b, stem));
        }
    }
    sources
        .into_iter()
        .map(|(source, bin)| {
            let text = std::fs::read_to_string(&source)
                .with_context(|| format!("reading {}", source.display()))?;
            let runs = parse_runs(&text).with_context(|| format!("in {}", source.display()))?;
            let marked = |marker: &str| text.lines().any(|l| l.trim() == marker);
            let (tsan, host_offload) = (marked("//@ tsan"), marked("//@ host-offload"));
            let (children_fault, sm90a) = (marked("//@ children-fault"), marked("//@ sm90a"));
            let sanitize_expects = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("//@ sanitize-expects:"))
                .map(|call| call.trim().to_owned())
                .collect();
            Ok(Program {
                binary: out.join(bin),
                source,
                runs,
                tsan,
                host_offload,
                children_fault,
                sanitize_expects,
                sm90a,
            })
        })
        .collect()
}

fn package_name(package: &Path) -> Result<String> {
    let manifest = std::fs::read_to_string(package.join("Cargo.toml"))?;
    let value: toml::Value = toml::from_str(&manifest)?;
    value
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("{} has no package name", package.display()))
}

/// The numbers a `//@ run:` line may give, in the order `parse_runs` reads them.
const COUNT_KEYS: [&str; 6] = ["h2d", "d2h", "h2d_bytes", "d2h_bytes", "present", "np"];

pub fn parse_runs(source: &str) -> Result<Vec<RunSpec>> {
    source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("//@ run:"))
        .map(|spec| {
            let (args, expect) = spec
                .split_once("=>")
                .ok_or_else(|| anyhow!("`//@ run:{spec}` lacks `=> h2d=N d2h=M`"))?;
            let mut counts = [None; COUNT_KEYS.len()];
            let mut env = Vec::new();
            for item in expect.split_whitespace() {
                let (key, value) =
                    item.split_once('=').ok_or_else(|| anyhow!("`{item}` is not key=value"))?;
                if key == "env" {
                    let (k, v) = value
                        .split_once('=')
                        .ok_or_else(|| anyhow!("`{item}` is not env=KEY=VALUE"))?;
                    env.push((k.to_owned(), v.to_owned()));
                    continue;
                }
                let Some(slot) = COUNT_KEYS.iter().position(|&k| k == key) else {
                    bail!("unknown expectation `{key}` ({}, env)", COUNT_KEYS.join(", "));
                };
                counts[slot] = Some(value.parse::<usize>().with_context(|| format!("`{item}`"))?);
            }
            let [Some(host_to_device), Some(device_to_host), h2d_bytes, d2h_bytes, present, ranks] =
                counts
            else {
                bail!("`//@ run:{spec}` needs both h2d= and d2h=");
            };
            Ok(RunSpec {
                args: args.split_whitespace().map(str::to_owned).collect(),
                host_to_device,
                device_to_host,
                host_to_device_bytes: h2d_bytes,
                device_to_host_bytes: d2h_bytes,
                present,
                ranks,
                env,
            })
        })
        .collect()
}

impl RunSpec {
    /// How the suites name this run of `source`: its arguments, and its ranks where there are.
    pub fn name(&self, root: &Path, source: &Path) -> String {
        let ranks = self.ranks.map(|r| format!(" (mpirun -np {r})")).unwrap_or_default();
        let source = source.strip_prefix(root).unwrap_or(source).display();
        format!("{source} {}{ranks}", self.args.join(" "))
    }
}

/// The outcome of one run.
pub struct RunResult {
    pub ok: bool,
    pub detail: String,
    pub stdout: String,
}

/// Runs a program under `OMP_TARGET_OFFLOAD=MANDATORY` with every copy and every present
/// mapping logged, and checks its exit status and what the runtime did; under `sanitizer`, and
/// what it reported too.
pub fn run_checked(
    program: &Program,
    run: &RunSpec,
    sanitizer: Option<&Sanitizer>,
) -> Result<RunResult> {
    // Under mpirun each rank's stderr goes to a file of its own as well: the ranks' lines
    // interleave, even mid-line, on the one stderr mpirun forwards.
    let rank_logs = run.ranks.map(|_| tempfile::tempdir()).transpose()?;
    let program_cmd = match sanitizer {
        Some(sanitizer) => sanitizer.command(&program.binary, program.children_fault),
        None => Command::new(&program.binary),
    };
    let mut cmd = match (run.ranks, &rank_logs) {
        (Some(ranks), Some(logs)) => mpirun(ranks, logs.path(), &program_cmd),
        _ => program_cmd,
    };
    let (out, timed_out) = shell::runner().capture_within(
        cmd.args(&run.args)
            .env("OMP_TARGET_OFFLOAD", "MANDATORY")
            .env("LIBOMPTARGET_INFO", LOG_MAPPINGS)
            .envs(run.env.iter().map(|(k, v)| (k, v))),
        RUN_LIMIT,
    )?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let log = match &rank_logs {
        Some(logs) => ranks_stderr(logs.path())?,
        None => stderr.to_string(),
    };
    let (h2d, d2h) = count_copies(&log);
    let (h2d_bytes, d2h_bytes) = count_copied_bytes(&log);
    let present = count_present(&log);
    let mut problems = Vec::new();
    if timed_out {
        problems.push(format!(
            "still running after {} s, killed (a hang: a barrier, a lock, a wait)",
            RUN_LIMIT.as_secs()
        ));
    } else if !out.status.success() {
        let tail: Vec<&str> = stderr.lines().filter(|l| !l.contains(" info: ")).collect();
        problems.push(format!("exited with {}: {}", out.status, tail.join("\n")));
    }
    if (h2d, d2h) != (run.host_to_device, run.device_to_host) {
        problems.push(format!(
            "copies host->device {h2d}, device->host {d2h}; expected {} and {}",
            run.host_to_device, run.device_to_host
        ));
    }
    for (way, copied, expected) in [
        ("host->device", h2d_bytes, run.host_to_device_bytes),
        ("device->host", d2h_bytes, run.device_to_host_bytes),
    ] {
        if let Some(expected) = expected.filter(|&b| b != copied) {
            problems.push(format!("{copied} bytes copied {way}; expected {expected}"));
        }
    }
    if let Some(expected) = run.present.filter(|&p| p != present) {
        problems.push(format!("{present} mappings of data already mapped; expected {expected}"));
    }
    if let Some(sanitizer) = sanitizer {
        let reports = sanitizer.reports()?;
        if !reports.is_empty() {
            problems.push(format!(
                "compute-sanitizer --tool {} reported:
{reports}",
                sanitizer.tool.name()
            ));
        }
    }
    Ok(RunResult { ok: problems.is_empty(), detail: problems.join("; "), stdout })
}

/// How long one run test may take: the slowest take seconds; a hang fails the suite instead of
/// holding it (and CI) forever.
const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// libomptarget's info bits: 0x2 reports each mapping that finds its data already mapped,
/// 0x20 each copy.
const LOG_MAPPINGS: &str = "34";

/// Begin mappers that found their data mapped already (the reference count went up), as
/// reported under [`LOG_MAPPINGS`].
pub fn count_present(log: &str) -> usize {
    log.lines().filter(|l| l.contains("Mapping exists") && l.contains("(incremented)")).count()
}

/// `mpirun -np ranks` of `program` (the program, or compute-sanitizer running it: each rank
/// under its own), as root too, with more ranks than cores where asked: every rank inherits
/// the run's environment, and writes its output under `logs` too (`1/rank.N/stderr`). The ranks
/// of one machine talk through shared memory, copied through it (the kernel's cross-memory
/// attach is refused in many containers), and mpirun ends them itself before the run's time
/// limit, since the harness's kill of mpirun would not reach them.
fn mpirun(ranks: usize, logs: &Path, program: &Command) -> Command {
    let limit = RUN_LIMIT.as_secs().saturating_sub(10).to_string();
    let mut cmd = Command::new("mpirun");
    cmd.args(["-np", &ranks.to_string(), "--oversubscribe", "--timeout", &limit])
        .arg("--output-filename")
        .arg(logs)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_pml", "ob1")
        .env("OMPI_MCA_btl", "self,vader")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .arg(program.get_program())
        .args(program.get_args());
    for (key, value) in program.get_envs() {
        if let Some(value) = value {
            cmd.env(key, value);
        }
    }
    cmd
}

/// The stderr of every rank of an mpirun, one after another.
fn ranks_stderr(logs: &Path) -> Result<String> {
    let mut all = String::new();
    for job in std::fs::read_dir(logs).with_context(|| format!("reading {}", logs.display()))? {
        for rank in std::fs::read_dir(job?.path())? {
            let file = rank?.path().join("stderr");
            if file.is_file() {
                all += &std::fs::read_to_string(&file)
                    .with_context(|| format!("reading {}", file.display()))?;
            }
        }
    }
    Ok(all)
}

/// Bytes copied each way, summed over the copies [`count_copies`] counts (their `Size=`).
pub fn count_copied_bytes(log: &str) -> (usize, usize) {
    let bytes = |way| -> usize {
        copy_lines(log, way)
            .filter_map(|l| l.split("Size=").nth(1))
            .filter_map(|rest| {
                rest.split(|c: char| !c.is_ascii_digit()).next()?.parse::<usize>().ok()
            })
            .sum()
    };
    (bytes(TO_DEVICE), bytes(TO_HOST))
}

/// Copies reported under [`LOG_MAPPINGS`], by the runtime or, for a launch's plain arguments on
/// a GPU, by the library in the runtime's words: (host to device, device to host).
pub fn count_copies(log: &str) -> (usize, usize) {
    (copy_lines(log, TO_DEVICE).count(), copy_lines(log, TO_HOST).count())
}

/// How the runtime (and the library, in its words) says a copy each way.
const TO_DEVICE: &str = "Copying data from host to device";
const TO_HOST: &str = "Copying data from device to host";

/// The lines of `log` that report a copy `way`.
fn copy_lines<'a>(log: &'a str, way: &'a str) -> impl Iterator<Item = &'a str> {
    log.lines().filter(move |l| l.contains(way))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_lines_parse() {
        let runs = parse_runs(
            "//! doc\n//@ run: 64 48 10 => h2d=2 d2h=2\n//@ run: => h2d=0 d2h=0\nfn main() {}",
        )
        .unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(
            runs[0],
            RunSpec {
                args: vec!["64".into(), "48".into(), "10".into()],
                host_to_device: 2,
                device_to_host: 2,
                host_to_device_bytes: None,
                device_to_host_bytes: None,
                present: None,
                ranks: None,
                env: vec![],
            }
        );
        assert!(runs[1].args.is_empty());
        let run =
            &parse_runs("//@ run: 1 => h2d=0 d2h=0 env=OMP_TARGET_OFFLOAD=DISABLED").unwrap()[0];
        assert_eq!(run.env, [("OMP_TARGET_OFFLOAD".to_owned(), "DISABLED".to_owned())]);
        assert_eq!(parse_runs("//@ run: => h2d=1 d2h=0 present=3").unwrap()[0].present, Some(3));
        let run =
            &parse_runs("//@ run: 8 => h2d=2 d2h=2 h2d_bytes=64 d2h_bytes=32 np=4").unwrap()[0];
        assert_eq!(
            (run.host_to_device_bytes, run.device_to_host_bytes, run.ranks),
            (Some(64), Some(32), Some(4))
        );
    }

    #[test]
    fn malformed_run_lines_are_errors() {
        assert!(parse_runs("//@ run: 3").is_err());
        assert!(parse_runs("//@ run: 3 => h2d=1").is_err());
        assert!(parse_runs("//@ run: 3 => h2d=x d2h=1").is_err());
        assert!(parse_runs("//@ run: 3 => h2d=1 d2h=1 bogus=2").is_err());
    }

    #[test]
    fn copies_are_counted_by_direction() {
        let log = "omptarget device 0 info: Copying data from host to device, HstPtr=0x1, Size=8\n\
                   omptarget device 0 info: Copying data from host to device, HstPtr=0x2, Size=8\n\
                   omptarget device 0 info: Copying data from device to host, TgtPtr=0x3, Size=8\n\
                   offload info: Copying data from device to host on the library's stream, HstPtr=0x4, TgtPtr=0x5, Size=8\n\
                   something else\n";
        assert_eq!(count_copies(log), (2, 2));
        assert_eq!(count_copied_bytes(log), (16, 16));
    }

    #[test]
    fn present_mappings_are_the_increments() {
        let log = "omptarget device 0 info: Mapping exists with HstPtrBegin=0x1, TgtPtrBegin=0x2, \
                   Size=8, DynRefCount=2 (incremented), HoldRefCount=0, Name=unknown\n\
                   omptarget device 0 info: Mapping exists with HstPtrBegin=0x1, TgtPtrBegin=0x2, \
                   Size=8, DynRefCount=1 (decremented), HoldRefCount=0\n\
                   omptarget device 0 info: Mapping exists with HstPtrBegin=0x1, TgtPtrBegin=0x2, \
                   Size=8, DynRefCount=1 (update suppressed), HoldRefCount=0\n";
        assert_eq!(count_present(log), 1);
    }
}
