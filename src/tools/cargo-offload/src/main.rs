//! `cargo offload build|run|test`: from Rust source with kernels and preloads to a program that
//! runs through LLVM's offload runtime.
//!
//! ```text
//! device images (the kernels, per target) -> host program (cargo, linked by offload-ld:
//! lowering + embedding) -> run
//! ```

mod cargo_files;
mod command;
mod doctor;
mod flags;
mod fresh;
mod host;
mod image;
mod new;
mod nvptx;
mod project;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow};
use clap::{Args, Parser, Subcommand, ValueEnum as _};

use crate::command::{Cmd, Runner};
use crate::host::HostAction;
use crate::project::{Features, Project};

#[derive(Parser)]
#[command(name = "cargo-offload", bin_name = "cargo offload", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Sub,
}

#[derive(Subcommand)]
enum Sub {
    /// Build the device images and the host program.
    Build(BuildArgs),
    /// Build, then run a binary of the package.
    Run(RunArgs),
    /// Build and run the package's tests through the offload pipeline.
    Test(TestArgs),
    /// Create a package that `cargo offload run` runs: a kernel, a program, a nightly toolchain.
    New {
        /// The package's folder (its name is the package's).
        path: PathBuf,
        /// The `offload` library to depend on (default: this tool's repository's).
        #[arg(long, value_name = "PATH")]
        offload: Option<PathBuf>,
    },
    /// Say what building and running offload programs needs here, and how to fix what is
    /// missing.
    Doctor {
        /// Folder holding libomptarget.so.19.1 and libomp.so.5.
        #[arg(long, default_value = offload_abi::runtime::DEFAULT_DIR)]
        runtime_dir: PathBuf,
    },
    /// Install CUDA 11.8's ptxas (PyPI nvidia-cuda-nvcc-cu11) into the tool's own folder
    /// (OFFLOAD_HOME, else ~/.cache/offload) ahead of the first build, which would do it.
    Setup {
        #[arg(short, long)]
        verbose: bool,
    },
}

/// Which device images to embed.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Devices {
    /// The host-offload image, and the NVIDIA one where ptxas is installed.
    Auto,
    /// The x86_64 host-offload image only.
    Host,
    /// The NVIDIA (nvptx64 cubin) image only: the program runs on a GPU or not at all.
    Cuda,
    /// Both, failing where the NVIDIA image cannot be built.
    All,
}

#[derive(Args, Clone)]
struct BuildArgs {
    /// The package's Cargo.toml.
    #[arg(long)]
    manifest_path: Option<PathBuf>,
    /// Print every command run.
    #[arg(short, long)]
    verbose: bool,
    /// Print the commands instead of running them.
    #[arg(long)]
    dry_run: bool,
    /// Keep the lowered IR of every unit and of the glue in target/offload/temps/<package>.
    #[arg(long)]
    save_temps: bool,
    /// Offload entry layout: llvm19 (Debian's libomptarget 19) or current (LLVM 20 and later).
    #[arg(long, default_value = "llvm19", value_parser = ["llvm19", "current"])]
    abi: String,
    /// Folder holding libomptarget.so.19.1 and libomp.so.5.
    #[arg(long, default_value = offload_abi::runtime::DEFAULT_DIR)]
    runtime_dir: PathBuf,
    /// Device images to embed.
    #[arg(long, value_enum, default_value = "auto")]
    devices: Devices,
    /// GPU architecture of the NVIDIA image: up to sm_90, or sm_90a (Hopper's wgmma).
    #[arg(long, default_value = nvptx::DEFAULT_TARGET_CPU)]
    target_cpu: String,
    /// The ptxas assembling the NVIDIA image (CUDA 11.8's); default: OFFLOAD_PTXAS, then the
    /// one `cargo offload setup` installed.
    #[arg(long)]
    ptxas: Option<PathBuf>,
    #[command(flatten)]
    features: Features,
    /// Accepted out of cargo's habit: the device images and the program are always built in
    /// the release profile.
    #[arg(long, hide = true)]
    release: bool,
    /// Where to build (as cargo's `--target-dir`; default: cargo's target directory).
    #[arg(long, value_name = "DIRECTORY")]
    target_dir: Option<PathBuf>,
    /// Build this example of the package too (may be repeated; `run` runs it).
    #[arg(long, value_name = "NAME")]
    example: Vec<String>,
    /// Build every example of the package too.
    #[arg(long)]
    examples: bool,
}

impl BuildArgs {
    /// cargo's options for the examples asked for.
    fn example_args(&self) -> Vec<String> {
        let mut args: Vec<String> = self.example.iter().map(|e| format!("--example={e}")).collect();
        if self.examples {
            args.push("--examples".to_owned());
        }
        args
    }
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// The binary to run, where the package has several.
    #[arg(long, conflicts_with_all = ["example", "examples"])]
    bin: Option<String>,
    /// Run the program under COMMAND (its words split at spaces), as cargo's
    /// `target.<triple>.runner`: `--runner "mpirun -np 4"` starts four MPI ranks.
    #[arg(long, value_name = "COMMAND")]
    runner: Option<String>,
    /// Arguments for the program.
    #[arg(last = true)]
    args: Vec<String>,
}

#[derive(Args)]
struct TestArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// Test only the package's library.
    #[arg(long)]
    lib: bool,
    /// Test only this binary (may be repeated).
    #[arg(long, value_name = "NAME")]
    bin: Vec<String>,
    /// Test only this integration test (may be repeated).
    #[arg(long, value_name = "NAME")]
    test: Vec<String>,
    /// Run every test binary, even after one fails.
    #[arg(long)]
    no_fail_fast: bool,
    /// Arguments for the test binaries (a name filter, `--nocapture`, ...).
    #[arg(last = true)]
    args: Vec<String>,
}

impl TestArgs {
    /// cargo test's options for which tests to build and run.
    fn selection(&self) -> Vec<String> {
        let mut args = Vec::new();
        if self.lib {
            args.push("--lib".to_owned());
        }
        args.extend(self.bin.iter().map(|b| format!("--bin={b}")));
        args.extend(self.test.iter().map(|t| format!("--test={t}")));
        if self.no_fail_fast {
            args.push("--no-fail-fast".to_owned());
        }
        args
    }
}

/// Choices shared by every stage.
#[derive(Clone)]
pub(crate) struct Config {
    pub(crate) runner: Runner,
    pub(crate) cargo: String,
    pub(crate) offload_ld: PathBuf,
    pub(crate) abi: String,
    pub(crate) runtime_dir: PathBuf,
    pub(crate) save_temps: bool,
}

impl Config {
    fn new(args: &BuildArgs) -> Result<Self> {
        if let Some(dir) = &args.target_dir {
            let dir = std::path::absolute(dir)
                .with_context(|| format!("the target directory {}", dir.display()))?;
            // Every cargo this tool runs, and `cargo metadata`, take it from there.
            // SAFETY: no other thread runs yet: the builds start after the configuration.
            unsafe { std::env::set_var("CARGO_TARGET_DIR", dir) };
        }
        let offload_ld = offload_ld()?;
        Ok(Config {
            runner: Runner { verbose: args.verbose, dry_run: args.dry_run, held: None },
            cargo: std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()),
            offload_ld,
            abi: args.abi.clone(),
            runtime_dir: args.runtime_dir.clone(),
            save_temps: args.save_temps,
        })
    }

    /// Flags passed to every cargo invocation.
    pub(crate) fn cargo_flags(&self) -> Vec<&'static str> {
        if self.runner.verbose { vec![] } else { vec!["--quiet"] }
    }

    /// A progress line on stderr (not in dry runs, whose stdout is the plan).
    pub(crate) fn status(&self, what: &str) {
        if !self.runner.dry_run {
            eprintln!("offload: {what}");
        }
    }
}

/// The link stage: `OFFLOAD_LD`, else `offload-ld` beside this tool.
fn offload_ld() -> Result<PathBuf> {
    match std::env::var_os("OFFLOAD_LD") {
        Some(p) => Ok(PathBuf::from(p)),
        None => Ok(std::env::current_exe()
            .context("locating cargo-offload")?
            .with_file_name("offload-ld")),
    }
}

fn main() -> ExitCode {
    if std::env::var_os(nvptx::AS_LINKER).is_some() {
        return nvptx::stand_in_linker(std::env::args_os().skip(1));
    }
    // As a cargo subcommand the second argument is "offload".
    let args = std::env::args_os()
        .enumerate()
        .filter(|(i, a)| !(*i == 1 && a == "offload"))
        .map(|(_, a)| a);
    match run(Cli::parse_from(args)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("offload: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Sub::Build(args) => {
            build(&Config::new(&args)?, &args, HostAction::Build, &TestRun::default())?;
            Ok(0)
        }
        Sub::Test(args) => {
            let test = TestRun { selection: args.selection(), args: args.args.clone() };
            build(&Config::new(&args.build)?, &args.build, HostAction::Test, &test)?;
            Ok(0)
        }
        Sub::New { path, offload } => {
            let name = new::new_package(&path, offload.as_deref())?;
            eprintln!(
                "offload: created package `{name}` in {} (run it: cd {} && cargo offload run)",
                path.display(),
                path.display()
            );
            Ok(0)
        }
        Sub::Doctor { runtime_dir } => Ok(u8::from(!doctor::doctor(&runtime_dir, &offload_ld()?)?)),
        Sub::Setup { verbose } => {
            let ptxas = nvptx::install_ptxas(&Runner { verbose, ..Runner::default() })?;
            eprintln!("offload: ptxas at {}", ptxas.display());
            Ok(0)
        }
        Sub::Run(args) => {
            let config = Config::new(&args.build)?;
            let bin = match (args.build.example.as_slice(), args.build.examples) {
                ([], false) => None,
                ([one], false) => Some(one.as_str()),
                _ => anyhow::bail!("cargo offload run runs one program: pass one --example"),
            };
            let project = build(&config, &args.build, HostAction::Build, &TestRun::default())?;
            let bin = match bin {
                Some(example) => host::example(&project, example)?,
                None => host::binary(&project, args.bin.as_deref())?,
            };
            config.status(&format!("running {}", bin.display()));
            let mut runner = args.runner.iter().flat_map(|r| r.split_whitespace());
            let cmd = match runner.next() {
                Some(program) => Cmd::new(program).args(runner).arg(bin),
                None => Cmd::new(bin),
            };
            let code = config.runner.run_program(&cmd.args(&args.args))?;
            Ok(u8::try_from(code).unwrap_or(1))
        }
    }
}

/// Which tests `cargo offload test` builds, and what it passes them.
#[derive(Default)]
struct TestRun {
    selection: Vec<String>,
    args: Vec<String>,
}

/// Device images, then the host program linked with them (or its tests run with them, as
/// `test` says).
fn build(config: &Config, args: &BuildArgs, action: HostAction, test: &TestRun) -> Result<Project> {
    // The hold on the images lasts until the host program is linked with them.
    let (project, images, hold) = fresh_or_built_images(config, args)?;
    let cmd = host::host_command(&project, &images, config, action)?.args(args.example_args());
    if action == HostAction::Test {
        config.status(&format!("building the host program of {}", project.name));
        // The tests are linked while the images are held, and run once they are not: a test
        // that builds this package again would wait for this build for ever.
        let cmd = cmd.args(&test.selection);
        let link = cmd.clone().arg("--no-run");
        if config.runner.verbose || config.runner.dry_run {
            config.runner.run("the host program build", &link)?;
        } else {
            // cargo prints the warnings of what it built again when the tests run: what the
            // link printed is shown only where it failed.
            let (runner, held) = config.runner.holding();
            runner.run("the host program build", &link).inspect_err(|_| held.show())?;
        }
        drop(hold);
        let cmd = if test.args.is_empty() { cmd } else { cmd.arg("--").args(&test.args) };
        return config.runner.run("the host program's tests", &cmd).map(|()| project);
    }
    // Recorded, and the record looked at, neither in a dry run (whose plan is every step) nor
    // where the images are not held (no record of them either). The command is hashed as a
    // build without --verbose runs it: cargo's output is not what it makes.
    let command = match (!config.runner.dry_run && hold.is_some(), config.runner.verbose) {
        (false, _) => None,
        (true, false) => Some(fresh::host::command_hash(&cmd.display())),
        (true, true) => {
            let runner = Runner { verbose: false, ..config.runner.clone() };
            let quiet = Config { runner, ..config.clone() };
            let quiet = host::host_command(&project, &images, &quiet, action)?;
            Some(fresh::host::command_hash(&quiet.args(args.example_args()).display()))
        }
    };
    if let Some(command) = &command {
        match fresh::host::stale(&project, command) {
            None => {
                config.status(&format!("the host program of {} is up to date", project.name));
                return Ok(project);
            }
            Some(why) if config.runner.verbose => {
                eprintln!("offload: building the host program: {why}");
            }
            Some(_) => {}
        }
        fresh::host::forget(&project)?;
    }
    config.status(&format!("building the host program of {}", project.name));
    // (Its file is made in the target folder: not in a dry run.)
    let started =
        command.as_ref().map(|_| fresh::build_started(&project, std::time::Instant::now()));
    config.runner.run("the host program build", &cmd)?;
    if let (Some(command), Some(started)) = (&command, started) {
        let programs = host::programs(&project, &args.example, args.examples);
        let written = fresh::host::record(&project, command, &programs, started);
        if let Err(e) = written
            && config.runner.verbose
        {
            eprintln!("offload: the host program is not recorded: {e:#}");
        }
    }
    drop(hold);
    Ok(project)
}

/// The package and its device images: those of the last build where nothing they were made from
/// changed (fresh.rs), else built now (and recorded); with the hold on them, where there is one.
fn fresh_or_built_images(
    config: &Config,
    args: &BuildArgs,
) -> Result<(Project, Vec<image::Image>, Option<fresh::Hold>)> {
    let devices = args.devices.to_possible_value().map(|v| v.get_name().to_owned());
    let options = fresh::Options {
        devices: devices.as_deref().unwrap_or_default(),
        target_cpu: &args.target_cpu,
        ptxas: args.ptxas.as_deref(),
        features: &args.features,
    };
    if !config.runner.dry_run {
        match fresh::check(args.manifest_path.as_deref(), &options) {
            fresh::Check::Fresh(project, images, hold) => {
                config.status(&format!("the device images of {} are up to date", project.name));
                return Ok((*project, images, Some(hold)));
            }
            fresh::Check::Stale(why) if config.runner.verbose => {
                eprintln!("offload: building the device images: {why}");
            }
            fresh::Check::Stale(_) => {}
        }
    }
    let since = std::time::Instant::now();
    let mut project = Project::load(&config.runner, args.manifest_path.as_deref(), &args.features)?;
    // Both images and the user's cfg(..) tables are the package toolchain's.
    let rustc = nvptx::find_rustc(&project, config)?;
    let user = flags::user_rustflags(&config.runner, &config.cargo, &rustc);
    if let Some(warning) = &user.warning {
        eprintln!("offload: warning: {warning}");
    }
    project.user_rustflags = user.flags;
    if config.runner.dry_run {
        let built = device_images(&project, config, args, &rustc)?;
        return Ok((project, built.images, None));
    }
    // Taken once the target folder is known, counted from before the package was read.
    let started = fresh::build_started(&project, since);
    // Where the lock cannot be had (a file system without locks), nothing is recorded.
    let hold = fresh::Hold::alone(&project)
        .inspect_err(|e| {
            if config.runner.verbose {
                eprintln!("offload: the device images are not recorded: {e:#}");
            }
        })
        .ok();
    fresh::forget(&project)?;
    let built = device_images(&project, config, args, &rustc)?;
    // Without ptxas, `auto` builds the host-offload image alone, and says so on every build
    // until ptxas is installed: no record.
    if built.as_asked && hold.is_some() {
        let recorded =
            fresh::record(&config.runner, &project, &built.images, &options, &rustc, started);
        if let Err(e) = recorded
            && config.runner.verbose
        {
            eprintln!("offload: the device images are not recorded: {e:#}");
        }
    }
    Ok((project, built.images, hold))
}

/// What [`device_images`] built.
struct BuiltImages {
    images: Vec<image::Image>,
    /// Whether they are those `--devices` asked for (not so where `auto` found no ptxas).
    as_asked: bool,
}

type HostJob<'scope> = std::thread::ScopedJoinHandle<'scope, Result<(image::Image, Vec<String>)>>;

/// The host-offload image and its kernels, once: `None` where they were already waited for.
fn join_host(job: &mut Option<HostJob<'_>>) -> Option<Result<(image::Image, Vec<String>)>> {
    let job = job.take()?;
    Some(job.join().map_err(|_| anyhow!("the host-offload image build panicked")).and_then(|r| r))
}

/// The images to embed, the NVIDIA one first: the runtime numbers devices in the order images
/// register, so a GPU becomes the default device where there is one. The x86_64 image is
/// always built: its exports are the kernels the NVIDIA image must define. The two build at
/// once (the NVIDIA one waits for the kernels only to check its PTX), except in a dry run,
/// whose plan lists them in order. Both come from `rustc`, the package's toolchain's.
fn device_images(
    project: &Project,
    config: &Config,
    args: &BuildArgs,
    rustc: &Path,
) -> Result<BuiltImages> {
    let host_and_kernels = || -> Result<(image::Image, Vec<String>)> {
        let host = image::build_host_image(project, config, rustc)?;
        let kernels =
            if config.runner.dry_run { Vec::new() } else { image::exported_kernels(&host.path)? };
        Ok((host, kernels))
    };
    let mut opts = nvptx::NvptxOptions::new()?;
    opts.target_cpu = args.target_cpu.clone();
    opts.ptxas = args.ptxas.clone();
    // What the NVIDIA image needs beyond the host-offload one: ptxas and a nightly rustc. Where
    // `auto` finds either missing it builds the host-offload image alone, and says why.
    let nvptx_rustc = match args.devices {
        Devices::Host => None,
        Devices::Cuda | Devices::All => Some(nvptx::nightly_rustc(rustc, &config.runner)?),
        Devices::Auto => {
            let ptxas = if config.runner.dry_run {
                nvptx::find_ptxas(opts.ptxas.as_deref())
            } else {
                nvptx::ensure_ptxas_if_installable(opts.ptxas.as_deref(), &config.runner)
            };
            match ptxas.and_then(|_| nvptx::nightly_rustc(rustc, &config.runner)) {
                Ok(nightly) => Some(nightly),
                Err(e) => {
                    eprintln!(
                        "offload: warning: building for the host-offload device only (the \
                         NVIDIA image cannot be built: {e:#})"
                    );
                    None
                }
            }
        }
    };
    let Some((nvptx_rustc, why)) = nvptx_rustc else {
        let images = vec![host_and_kernels()?.0];
        return Ok(BuiltImages { images, as_asked: args.devices == Devices::Host });
    };
    if let Some(why) = why {
        config.status(&why);
    }
    let rustc_for_nvptx = nvptx_rustc.as_path();
    let (nvptx, host) = if config.runner.dry_run {
        let (host, kernels) = host_and_kernels()?;
        (nvptx::build_nvptx_image(project, config, &opts, rustc_for_nvptx, || Ok(kernels))?, host)
    } else {
        // What the nvptx build prints waits until the host-offload image built: an error in
        // the kernels is shown by that build alone.
        let (held_runner, held) = config.runner.holding();
        let held_config = Config { runner: held_runner, ..config.clone() };
        std::thread::scope(|s| -> Result<_> {
            let mut job = Some(s.spawn(host_and_kernels));
            let mut host_image = None;
            let mut host_failed = false;
            let nvptx =
                nvptx::build_nvptx_image(project, &held_config, &opts, rustc_for_nvptx, || {
                    match join_host(&mut job) {
                        Some(Ok((image, kernels))) => {
                            host_image = Some(image);
                            Ok(kernels)
                        }
                        Some(Err(e)) => {
                            host_failed = true;
                            Err(e)
                        }
                        None => Err(anyhow!("the host-offload image was waited for twice")),
                    }
                });
            // The nvptx build stopped before it asked for the kernels: the host-offload image
            // is waited for all the same, and its error comes first.
            match join_host(&mut job) {
                Some(Ok((image, _))) => host_image = Some(image),
                Some(Err(e)) => return Err(e),
                None => {}
            }
            // Where the host-offload image failed, its error is the nvptx build's, and what the
            // nvptx build printed is not shown.
            if !host_failed {
                held.show();
            }
            let nvptx = nvptx?;
            let host = host_image.context("the host-offload image was not waited for")?;
            Ok((nvptx, host))
        })?
    };
    let images = match args.devices {
        Devices::Cuda => vec![nvptx],
        _ => vec![nvptx, host],
    };
    Ok(BuiltImages { images, as_asked: true })
}
