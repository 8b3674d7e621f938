//! `x.py test [SUITE...]`: the suites, each a named thing x.py runs.
//!
//! `unit` (cargo test of the workspace), `codegen` (FileCheck of the lowered IR), `ptx`
//! (FileCheck of the NVIDIA image's PTX: what the device build makes of kernels), `ui` (what
//! the compiler must reject), `docs` (every Rust block of the docs compiles), `run` (programs through the runtime's host-offload plugin,
//! copies counted), `tsan` (the run tests marked `//@ tsan`, built with ThreadSanitizer).
//! `install` (`cargo install` of the tool into a folder of its own, then packages outside the
//! repository built and run by it alone: install_suite.rs). `gpu` runs the run suite on an NVIDIA GPU
//! and is only run when asked for; `gpu --sanitize` runs it again under compute-sanitizer.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};
use offload_support::toolchain;

use crate::config::Config;
use crate::programs::{self, Flavor, RUN_SUITE, SM90A_PACKAGE};
use crate::sanitize::{self, Sanitizer, Tool};
use crate::tools::Tools;
use crate::{docs_suite, install_suite, shell};

const DEFAULT_SUITES: &[&str] = &["unit", "codegen", "ptx", "ui", "docs", "run", "tsan", "install"];

/// The ptx suite's package, and its image's PTX under the GPU programs' target folder.
const PTX_SUITE: &str = "tests/ptx";
const PTX_IMAGE: &str =
    "offload/images/offload-ptx-tests/nvptx64/offload_ptx_tests_offload_image.ptx";

/// What `x.py test` was asked for: a suite, and for codegen and ui the tests to run.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    suite: String,
    /// Only the tests whose name contains this (a test file named on the command line).
    filter: Option<String>,
}

/// How the suites run.
pub struct Options<'a> {
    /// Rewrite the ui tests' `.stderr` files.
    pub bless: bool,
    /// compute-sanitizer's tools to run the gpu suite under too.
    pub sanitize: &'a [Tool],
}

pub fn test(
    root: &Path,
    config: &Config,
    tools: &Tools,
    named: &[String],
    Options { bless, sanitize }: Options,
) -> Result<()> {
    let requests: Vec<Request> = if named.is_empty() {
        DEFAULT_SUITES.iter().map(|s| Request { suite: s.to_string(), filter: None }).collect()
    } else {
        named.iter().map(|s| request(s)).collect::<Result<_>>()?
    };
    if bless && !requests.iter().any(|r| r.suite == "ui") {
        bail!("--bless rewrites the .stderr files of ui tests: name the ui suite or a ui test");
    }
    if !sanitize.is_empty() && !requests.iter().any(|r| r.suite == "gpu") {
        bail!("--sanitize runs the gpu suite under compute-sanitizer: ./x.py test gpu --sanitize");
    }
    let (mut passed, mut failed) = (0usize, 0usize);
    for Request { suite, filter } in &requests {
        match filter {
            Some(f) => eprintln!("x: test suite `{suite}`, tests named like `{f}`"),
            None => eprintln!("x: test suite `{suite}`"),
        }
        let filter = filter.as_deref();
        let result = match suite.as_str() {
            "unit" => unit(root),
            "codegen" => compiletest(root, tools, "tests/codegen", "codegen", filter, false),
            "ptx" => ptx_suite(root, config, tools, filter),
            "ui" => compiletest(root, tools, "tests/ui", "ui", filter, bless),
            "run" => run_suite(root, config, tools, Flavor::Portable)
                .and_then(|()| check_nvptx_image(root, config)),
            "gpu" => gpu_suite(root, Some((config, tools)), sanitize),
            "tsan" => tsan_suite(root, config, tools),
            "install" => install_suite::run(root),
            "docs" => docs_suite::run(root),
            _ => unreachable!("suite names are checked"),
        };
        match result {
            Ok(()) => passed += 1,
            Err(e) => {
                eprintln!("x: suite `{suite}` failed: {e:#}");
                failed += 1;
            }
        }
    }
    println!("suites: {passed} passed, {failed} failed");
    if failed > 0 {
        bail!("{failed} test suite(s) failed");
    }
    Ok(())
}

/// `tests/codegen` -> `codegen`; plain names pass through.
fn suite_name(arg: &str) -> Result<String> {
    let name = arg.trim_end_matches('/').rsplit('/').next().unwrap_or(arg);
    match name {
        "unit" | "codegen" | "ptx" | "ui" | "docs" | "run" | "tsan" | "install" | "gpu" => {
            Ok(name.to_owned())
        }
        _ => bail!(
            "no test suite `{arg}` (suites: unit, codegen, ptx, ui, docs, run, tsan, install, gpu; or a test of codegen, ui or ptx, e.g. tests/codegen/launch_plain.rs)"
        ),
    }
}

/// A suite (`codegen`, `tests/codegen`), or one test file of the codegen or ui suite
/// (`tests/codegen/launch_plain.rs`), as rustc's x.py takes them.
fn request(arg: &str) -> Result<Request> {
    let path = Path::new(arg);
    if path.extension().is_some_and(|e| e == "rs") {
        let suite = path.parent().and_then(|p| p.file_name()).and_then(|s| s.to_str());
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let ptx = path.parent().is_some_and(|p| p.ends_with("ptx/src/kernels"));
        return match suite {
            Some(suite @ ("codegen" | "ui")) => {
                Ok(Request { suite: suite.to_owned(), filter: Some(stem.to_owned()) })
            }
            Some("kernels") if ptx => {
                Ok(Request { suite: "ptx".to_owned(), filter: Some(stem.to_owned()) })
            }
            _ => bail!(
                "`{arg}` is not a test of the codegen, ui or ptx suite (tests/codegen/NAME.rs, tests/ui/NAME.rs, tests/ptx/src/kernels/NAME.rs); the other suites run whole"
            ),
        };
    }
    Ok(Request { suite: suite_name(arg)?, filter: None })
}

fn unit(root: &Path) -> Result<()> {
    shell::runner().run(
        "cargo test",
        Command::new("cargo").current_dir(root).args(["test", "--workspace", "--quiet"]),
    )
}

fn compiletest(
    root: &Path,
    tools: &Tools,
    dir: &str,
    mode: &str,
    filter: Option<&str>,
    bless: bool,
) -> Result<()> {
    let mut cmd = Command::new(&tools.compiletest);
    cmd.current_dir(root).arg(dir).args(["--mode", mode]).args(filter);
    if bless {
        cmd.arg("--bless");
    }
    shell::runner().run(&format!("{dir} ({mode})"), &mut cmd)
}

/// The ptx suite: tests/ptx built for NVIDIA GPUs (here: no GPU needed), for the configured
/// GPU and for sm_90a, its PTX checked by compiletest against each scenario file of its
/// kernels.
fn ptx_suite(root: &Path, config: &Config, tools: &Tools, filter: Option<&str>) -> Result<()> {
    programs::build(root, tools, config, &root.join(PTX_SUITE), Flavor::GpuOnly)?;
    programs::build(root, tools, config, &root.join(PTX_SUITE), Flavor::Sm90a)?;
    let ptx = Flavor::GpuOnly.target_dir(root).join(PTX_IMAGE);
    let ptx_sm90a = Flavor::Sm90a.target_dir(root).join(PTX_IMAGE);
    let mut cmd = Command::new(&tools.compiletest);
    cmd.current_dir(root).arg(PTX_SUITE).arg("--ptx").arg(&ptx).arg("--ptx-sm90a").arg(&ptx_sm90a);
    cmd.args(filter);
    shell::runner().run(&format!("{PTX_SUITE} (ptx)"), &mut cmd)
}

/// On a machine without cargo: the gpu suite over the programs built before.
pub fn test_prebuilt(root: &Path, requested: &[String], sanitize: &[Tool]) -> Result<()> {
    if requested.iter().map(|s| suite_name(s)).collect::<Result<Vec<_>>>()? != ["gpu"] {
        bail!(
            "without cargo only `./x.py test gpu` runs (over programs built elsewhere by ./x.py test gpu)"
        );
    }
    gpu_suite(root, None, sanitize)?;
    println!("suites: 1 passed, 0 failed");
    Ok(())
}

/// The run suite on an NVIDIA GPU, with programs that embed the NVIDIA image alone: under
/// `OMP_TARGET_OFFLOAD=MANDATORY` they run on the GPU or fail. Each program checks its results
/// against the same computation on the CPU; the copies must match the host-offload runs'.
/// `build` is `None` on a machine without cargo, which runs what was built before. The
/// programs marked `//@ sm90a` run a second time built for sm_90a. With `sanitize`, the suite
/// then runs once more under each of compute-sanitizer's tools.
fn gpu_suite(root: &Path, build: Option<(&Config, &Tools)>, sanitize: &[Tool]) -> Result<()> {
    if let Some((config, tools)) = build {
        for package in RUN_SUITE {
            programs::build(root, tools, config, &root.join(package), Flavor::GpuOnly)?;
        }
        programs::build(root, tools, config, &root.join(SM90A_PACKAGE), Flavor::Sm90a)?;
    }
    let gpu = shell::runner()
        .capture(Command::new("nvidia-smi").arg("-L"))
        .ok()
        .filter(|o| o.status.success());
    let Some(gpu) = gpu else {
        bail!(
            "no NVIDIA GPU here (nvidia-smi -L fails): the programs are built in {}; run ./x.py test gpu on a GPU machine with that folder and target/debug/bootstrap",
            Flavor::GpuOnly.bin_dir(root).display()
        );
    };
    eprintln!("x: {}", String::from_utf8_lossy(&gpu.stdout).trim());
    let sanitizer = if sanitize.is_empty() { None } else { Some(sanitize::find()?) };
    for flavor in [Flavor::GpuOnly, Flavor::Sm90a] {
        run_programs(root, flavor, None)?;
    }
    let Some(sanitizer) = sanitizer else { return Ok(()) };
    for &tool in sanitize {
        eprintln!("x: the gpu suite under compute-sanitizer --tool {}", tool.name());
        for flavor in [Flavor::GpuOnly, Flavor::Sm90a] {
            run_programs(root, flavor, Some((&sanitizer, tool)))?;
        }
    }
    Ok(())
}

/// The run tests marked `//@ tsan` (threads preloading, launching and waiting at once), built
/// with ThreadSanitizer and run on the host-offload plugin: any report fails the run. The
/// runtime itself is not instrumented and is left out of the reports
/// (`ignore_noninstrumented_modules`, as libomp asks); the library, the program and the
/// standard library are checked.
fn tsan_suite(root: &Path, config: &Config, tools: &Tools) -> Result<()> {
    // In the repository: its rust-toolchain.toml picks the toolchain.
    let sysroot = toolchain::sysroot(&shell::runner(), Path::new("rustc"), Some(root))?;
    if !toolchain::has_rust_src(&sysroot) {
        bail!(
            "ThreadSanitizer needs the standard library's sources (./x.py setup adds them: rustup component add rust-src)"
        );
    }
    let package = root.join("tests/run");
    programs::build(root, tools, config, &package, Flavor::Tsan)?;
    let (mut passed, mut failed) = (0usize, 0usize);
    for program in programs::programs(root, &package, Flavor::Tsan)? {
        if !program.tsan {
            continue;
        }
        for run in &program.runs {
            let mut run = run.clone();
            run.env.push((
                "TSAN_OPTIONS".into(),
                "ignore_noninstrumented_modules=1 halt_on_error=1 exitcode=66".into(),
            ));
            let name = run.name(root, &program.source);
            let result = programs::run_checked(&program, &run, None)?;
            if result.ok {
                println!("tsan {name} ... ok {}", result.stdout.lines().next().unwrap_or(""));
                passed += 1;
            } else {
                println!("tsan {name} ... FAILED: {}", result.detail);
                failed += 1;
            }
        }
    }
    println!("tsan: {passed} passed, {failed} failed");
    if passed == 0 {
        bail!("no run test is marked //@ tsan");
    }
    if failed > 0 {
        bail!("{failed} tsan run(s) failed");
    }
    Ok(())
}

/// Builds every run-suite package, then runs each program as its `//@ run:` lines say.
fn run_suite(root: &Path, config: &Config, tools: &Tools, flavor: Flavor) -> Result<()> {
    for package in RUN_SUITE {
        programs::build(root, tools, config, &root.join(package), flavor)?;
    }
    run_programs(root, flavor, None)
}

fn run_programs(root: &Path, flavor: Flavor, sanitizer: Option<(&Path, Tool)>) -> Result<()> {
    let (mut passed, mut failed, mut not_run) = (0usize, 0usize, 0usize);
    for package in RUN_SUITE {
        for program in programs::programs(root, &root.join(package), flavor)? {
            if program.runs.is_empty() {
                bail!("{} has no //@ run: line", program.source.display());
            }
            if flavor == Flavor::Sm90a && !program.sm90a {
                continue;
            }
            for run in &program.runs {
                let name = run.name(root, &program.source);
                if program.host_offload && flavor == Flavor::GpuOnly {
                    println!(
                        "run {name} ... not run: it checks the host-offload image, which this build (NVIDIA image alone) has not"
                    );
                    not_run += 1;
                    continue;
                }
                let logs = tempfile::Builder::new().prefix("offload-sanitizer").tempdir()?;
                let sanitizer = sanitizer.map(|(binary, tool)| Sanitizer {
                    binary,
                    tool,
                    logs: logs.path(),
                    expected: &program.sanitize_expects,
                });
                let started = std::time::Instant::now();
                let result = programs::run_checked(&program, run, sanitizer.as_ref())?;
                // Under a sanitizer, how long each took (the tools slow programs down many times).
                let took = match sanitizer {
                    Some(_) => format!("({:.1} s) ", started.elapsed().as_secs_f64()),
                    None => String::new(),
                };
                if result.ok {
                    println!(
                        "run {name} ... ok {took}{}",
                        result.stdout.lines().next().unwrap_or_default()
                    );
                    passed += 1;
                } else {
                    println!("run {name} ... FAILED {took}: {}\n{}", result.detail, result.stdout);
                    failed += 1;
                }
            }
        }
    }
    if not_run > 0 {
        println!("run: {passed} passed, {failed} failed, {not_run} not run (host-offload image)");
    } else {
        println!("run: {passed} passed, {failed} failed");
    }
    if failed > 0 {
        bail!("{failed} run test(s) failed");
    }
    Ok(())
}

/// The NVIDIA image of tests/run, built beside the host-offload one: its PTX FileChecked
/// against tests/ptx/run_kernels.check, its cubin in the format libomptarget 19 loads.
fn check_nvptx_image(root: &Path, config: &Config) -> Result<()> {
    let dir = Flavor::Portable.target_dir(root).join("offload/images/offload-run-tests/nvptx64");
    let ptx = dir.join("offload_run_tests_offload_image.ptx");
    if !ptx.is_file() {
        bail!(
            "the NVIDIA image of tests/run was not built (no {}: is ptxas installed? ./x.py setup installs it)",
            ptx.display()
        );
    }
    let filecheck = toolchain::filecheck()?;
    shell::runner().run(
        "FileCheck of the PTX",
        Command::new(filecheck)
            .arg("--input-file")
            .arg(&ptx)
            .arg(root.join("tests/ptx/run_kernels.check")),
    )?;
    let cpu = &config.nvptx.target_cpu;
    offload_support::cubin::check_cubin(&dir.join("offload_run_tests_offload_image.cubin"), cpu)?;
    println!(
        "nvptx image of tests/run: PTX checked, cubin ELF64 EM_CUDA ABI version 7 for {cpu} ... ok"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Request, request};

    #[test]
    fn suites_and_test_files_are_requests() {
        let suite = |s: &str| Request { suite: s.to_owned(), filter: None };
        assert_eq!(request("codegen").unwrap(), suite("codegen"));
        assert_eq!(request("tests/ui/").unwrap(), suite("ui"));
        assert_eq!(
            request("tests/codegen/launch_plain.rs").unwrap(),
            Request { suite: "codegen".into(), filter: Some("launch_plain".into()) }
        );
        assert_eq!(
            request("./tests/ui/unsafe_kernel.rs").unwrap(),
            Request { suite: "ui".into(), filter: Some("unsafe_kernel".into()) }
        );
        assert_eq!(
            request("tests/ptx/src/kernels/unroll.rs").unwrap(),
            Request { suite: "ptx".into(), filter: Some("unroll".into()) }
        );
        assert_eq!(request("tests/ptx").unwrap(), suite("ptx"));
        let err = request("tests/run/src/bin/atomics.rs").unwrap_err().to_string();
        assert!(err.contains("not a test of the codegen, ui or ptx suite"), "{err}");
        assert!(request("nope").unwrap_err().to_string().contains("no test suite `nope`"));
    }
}
