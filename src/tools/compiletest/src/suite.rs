//! A suite: its compiletest configuration, its tests, and the count of their results.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context as _, Result, bail};
use compiletest_rs::Config;
use compiletest_rs::common::{Mode as CompiletestMode, TestPaths};
use tester::{ShouldPanic, TestDescAndFn, TestFn};

use crate::lower;
use crate::toolchain::Toolchain;

/// The edition every test is compiled in, unless its `//@ edition:` says otherwise.
const EDITION: &str = "2024";

/// What a suite's tests check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Mode {
    /// Each test is compiled to LLVM IR, lowered by offload_codegen, and FileChecked.
    Codegen,
    /// Each test must fail to compile with exactly its `.stderr`, and with the errors its `//~`
    /// annotations name on their lines.
    Ui,
}

/// What to run of a suite, and how.
#[derive(Debug, clap::Args)]
pub(crate) struct Options {
    /// What the suite's tests check [default: the suite directory's name].
    #[arg(long, value_enum)]
    pub(crate) mode: Option<Mode>,
    /// Rewrite the expected `.stderr` files of ui tests from the compiler's output.
    #[arg(long)]
    pub(crate) bless: bool,
    /// Run only the tests whose name contains this string.
    pub(crate) filter: Option<String>,
}

/// How many tests ran, and how many of those failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) passed: usize,
    pub(crate) failed: usize,
}

pub(crate) struct Suite {
    /// compiletest's configuration of the suite's check.
    config: Config,
    /// For ui tests, the compile-fail configuration that checks the `//~` annotations and the
    /// failure status (compiletest's ui mode compares the output only).
    annotations: Option<Config>,
}

impl Suite {
    /// Configures the suite in `dir`. Tests are compiled from the workspace root, so that the
    /// paths of the library's sources in diagnostics are the same wherever the runner starts.
    pub(crate) fn open(toolchain: &Toolchain, dir: &Path, options: Options) -> Result<Suite> {
        let Options { mode, bless, filter } = options;
        let dir =
            dir.canonicalize().with_context(|| format!("no test suite at {}", dir.display()))?;
        let mode = match mode {
            Some(mode) => mode,
            None => infer_mode(&dir)?,
        };
        let root = workspace_root()?;
        std::env::set_current_dir(&root).with_context(|| format!("entering {}", root.display()))?;
        let src_base = dir.strip_prefix(&root).map_or_else(|_| dir.clone(), Path::to_path_buf);
        let build_root = toolchain.profile_dir.join("offload-compiletest");
        let mut rustc_flags = rustc_flags(toolchain)?;
        if mode == Mode::Ui {
            // As in rustc's own ui suite: the gutters of the snippets read `LL`, so that an edit
            // above a diagnostic (in the test or in the library) does not change every line below.
            rustc_flags.push_str(" -Zui-testing");
        }

        let mut config = Config {
            src_base: src_base.clone(),
            rustc_path: toolchain.rustc.clone(),
            edition: Some(EDITION.to_owned()),
            // Only `//@` lines are headers: prose comments stay prose.
            strict_headers: true,
            bless,
            filters: filter.into_iter().collect(),
            target_rustcflags: Some(rustc_flags),
            ..Config::default()
        };
        let annotations = match mode {
            Mode::Codegen => {
                config.mode = CompiletestMode::Codegen;
                config.build_base = build_root.join("codegen");
                config.llvm_filecheck = Some(offload_support::toolchain::filecheck()?);
                config.llvm_filecheck_preprocess = Some(lower::preprocess);
                lower::install_suite(&src_base, &config.build_base)?;
                None
            }
            Mode::Ui => {
                config.mode = CompiletestMode::Ui;
                config.build_base = build_root.join("ui");
                let mut annotations = config.clone();
                annotations.mode = CompiletestMode::CompileFail;
                annotations.build_base = build_root.join("ui-annotations");
                Some(annotations)
            }
        };
        Ok(Suite { config, annotations })
    }

    /// Runs every test (those matching the filter) and counts the results.
    pub(crate) fn run(self) -> Result<Outcome> {
        let mut paths = Vec::new();
        collect(&self.config, &self.config.src_base, Path::new(""), &mut paths)?;
        if let Some(annotations) = &self.annotations {
            for p in &paths {
                create_build_dir(annotations, &p.relative_dir)?;
            }
        }
        let counts = Arc::new(Counts::default());
        let tests: Vec<TestDescAndFn> = paths.iter().map(|p| self.test(p, &counts)).collect();
        let opts = compiletest_rs::test_opts(&self.config);
        let harness_ok =
            tester::run_tests_console(&opts, tests).context("writing the test report")?;
        let outcome = Outcome {
            passed: counts.passed.load(Ordering::SeqCst),
            failed: counts.failed.load(Ordering::SeqCst),
        };
        if !harness_ok && outcome.failed == 0 {
            bail!("the test harness reported a failure outside any test");
        }
        Ok(outcome)
    }

    /// One test: compiletest's check (and, for ui tests, the annotation check), counted.
    fn test(&self, paths: &TestPaths, counts: &Arc<Counts>) -> TestDescAndFn {
        let TestDescAndFn { desc, testfn } = compiletest_rs::make_test(&self.config, paths);
        let TestFn::DynTestFn(check) = testfn else {
            unreachable!("compiletest makes dynamic tests")
        };
        let check: Box<dyn FnOnce() + Send> = match &self.annotations {
            None => check,
            Some(annotations) => {
                let (annotations, paths) = (annotations.clone(), paths.clone());
                Box::new(move || {
                    check();
                    compiletest_rs::runtest::run(annotations, &paths);
                })
            }
        };
        let expect_panic = !matches!(desc.should_panic, ShouldPanic::No);
        let counts = Arc::clone(counts);
        let testfn = TestFn::DynTestFn(Box::new(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(check));
            let counter =
                if result.is_err() == expect_panic { &counts.passed } else { &counts.failed };
            counter.fetch_add(1, Ordering::SeqCst);
            if let Err(payload) = result {
                panic::resume_unwind(payload);
            }
        }));
        TestDescAndFn { desc, testfn }
    }
}

#[derive(Default)]
struct Counts {
    passed: AtomicUsize,
    failed: AtomicUsize,
}

/// `tests/codegen` is a codegen suite, `tests/ui` a ui suite.
fn infer_mode(dir: &Path) -> Result<Mode> {
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("codegen") => Ok(Mode::Codegen),
        Some("ui") => Ok(Mode::Ui),
        _ => bail!("cannot tell what {} tests: pass --mode codegen or --mode ui", dir.display()),
    }
}

/// The workspace this runner belongs to (its manifest is `src/tools/compiletest/Cargo.toml`).
fn workspace_root() -> Result<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    root.canonicalize()
        .with_context(|| format!("the workspace of the runner is gone ({})", root.display()))
}

/// `--extern offload=<rlib>` and `--extern offload_blas=<rlib>`: the exact rlibs cargo built for
/// this runner (a plain `-L` would find every `liboffload-*.rlib` other builds left in `deps`
/// and fail with E0464); and their dependencies, found through `-L dependency=`.
fn rustc_flags(toolchain: &Toolchain) -> Result<String> {
    let (deps, rlib, blas) = (
        toolchain.deps.display().to_string(),
        toolchain.offload_rlib.display().to_string(),
        toolchain.blas_rlib.display().to_string(),
    );
    // compiletest splits these flags at whitespace.
    if deps.contains(char::is_whitespace) {
        bail!(
            "the target directory's path has a space ({deps}): compiletest cannot pass it to rustc"
        );
    }
    Ok(format!("-L dependency={deps} --extern offload={rlib} --extern offload_blas={blas}"))
}

/// The `.rs` files of `dir` and its subfolders, but not of `auxiliary` folders (their files are
/// inputs of tests), in name order.
fn collect(config: &Config, dir: &Path, relative: &Path, out: &mut Vec<TestPaths>) -> Result<()> {
    create_build_dir(config, relative)?;
    let mut entries = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .collect::<std::io::Result<Vec<_>>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let (path, name) = (entry.path(), entry.file_name());
        if path.is_dir() {
            if name != "auxiliary" {
                collect(config, &path, &relative.join(&name), out)?;
            }
        } else if compiletest_rs::is_test(&name) {
            out.push(TestPaths {
                file: path,
                base: config.src_base.clone(),
                relative_dir: relative.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// compiletest writes a test's outputs to `<build_base>/<relative dir>/`, which must exist.
fn create_build_dir(config: &Config, relative: &Path) -> Result<()> {
    let dir = config.build_base.join(relative);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))
}
