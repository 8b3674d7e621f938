//! The stages of `cargo offload build|run|test`, one function each:
//!
//! ```text
//! device_images -> host_program -> run          (build stops after host_program)
//! device_images -> link_tests   -> run_tests
//! ```
//!
//! The freshness records (fresh.rs) wrap a stage's build rather than run through it:
//! [`fresh::images`] and [`fresh::host::program`] check the record, run the build on a miss,
//! then record it. The images are held ([`fresh::Hold`]) from the first stage until the host
//! program, or the tests, are linked with them: the second stage takes them by value.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::ValueEnum as _;

use crate::command::Cmd;
use crate::config::Config;
use crate::devices::{self, Devices};
use crate::host::{self, HostAction};
use crate::image::Image;
use crate::project::{Features, Project};
use crate::{flags, fresh, nvptx};

/// What the stages are asked to build, beyond the choices they share ([`Config`]).
pub(crate) struct Request<'a> {
    /// The package's Cargo.toml (`--manifest-path`; else the nearest, as cargo finds it).
    pub(crate) manifest_path: Option<&'a Path>,
    pub(crate) devices: Devices,
    /// The GPU architecture of the NVIDIA image.
    pub(crate) target_cpu: &'a str,
    /// The ptxas assembling the NVIDIA image, where one is named.
    pub(crate) ptxas: Option<&'a Path>,
    pub(crate) features: &'a Features,
    /// The examples built too (`--example`).
    pub(crate) examples: &'a [String],
    /// Whether every example is built too (`--examples`).
    pub(crate) all_examples: bool,
}

impl Request<'_> {
    /// cargo's options for the examples asked for.
    fn example_args(&self) -> Vec<String> {
        let mut args: Vec<String> =
            self.examples.iter().map(|e| format!("--example={e}")).collect();
        if self.all_examples {
            args.push("--examples".to_owned());
        }
        args
    }
}

/// What the first stage hands on: the package and its device images, with the hold on them
/// (none in a dry run, nor where the lock could not be had).
pub(crate) struct Images {
    project: Project,
    images: Vec<Image>,
    hold: Option<fresh::Hold>,
}

/// The package and its device images: those of the last build where nothing they were made
/// from changed (fresh.rs), else built now (and recorded).
pub(crate) fn device_images(config: &Config, request: &Request<'_>) -> Result<Images> {
    let devices = request.devices.to_possible_value().map(|v| v.get_name().to_owned());
    let options = fresh::Options {
        devices: devices.as_deref().unwrap_or_default(),
        target_cpu: request.target_cpu,
        ptxas: request.ptxas,
        features: request.features,
    };
    let (project, images, hold) = fresh::images(
        config,
        request.manifest_path,
        &options,
        || package(config, request),
        |project, rustc| {
            let (target_cpu, ptxas) = (request.target_cpu, request.ptxas);
            devices::build_images(project, config, request.devices, target_cpu, ptxas, rustc)
        },
    )?;
    Ok(Images { project, images, hold })
}

/// The package, its rustflags for the host target as the user's configuration sets them, and
/// the rustc of its toolchain.
fn package(config: &Config, request: &Request<'_>) -> Result<(Project, PathBuf)> {
    let mut project = Project::load(&config.runner, request.manifest_path, request.features)?;
    // Both images and the user's cfg(..) tables are the package toolchain's.
    let rustc = nvptx::find_rustc(&project, config)?;
    let user = flags::user_rustflags(&config.runner, &config.cargo, &rustc);
    if let Some(warning) = &user.warning {
        eprintln!("offload: warning: {warning}");
    }
    project.user_rustflags = user.flags;
    Ok((project, rustc))
}

/// The host program linked with the images (and the examples asked for): not built again where
/// nothing it was made from changed (fresh/host.rs). The images are held until it is linked.
pub(crate) fn host_program(
    config: &Config,
    request: &Request<'_>,
    images: Images,
) -> Result<Project> {
    let Images { project, images, hold } = images;
    let make = |config: &Config| -> Result<Cmd> {
        let cmd = host::host_command(&project, &images, config, HostAction::Build)?;
        Ok(cmd.args(request.example_args()))
    };
    let cmd = make(config)?;
    let command = fresh::host::recorded_command(config, hold.is_some(), &cmd, make)?;
    fresh::host::program(config, &project, command.as_deref(), || {
        config.runner.run("the host program build", &cmd)?;
        Ok(host::programs(&project, request.examples, request.all_examples))
    })?;
    // Linked (or found so): the images may change from here.
    drop(hold);
    Ok(project)
}

/// The package's tests (`selection` says which, as cargo test's options) linked with the
/// images, which are held until then; the command that runs them ([`run_tests`]). Not recorded.
pub(crate) fn link_tests(
    config: &Config,
    request: &Request<'_>,
    images: Images,
    selection: &[String],
) -> Result<Cmd> {
    let Images { project, images, hold } = images;
    let cmd = host::host_command(&project, &images, config, HostAction::Test)?
        .args(request.example_args());
    config.status(&format!("building the host program of {}", project.name));
    let cmd = cmd.args(selection);
    let link = cmd.clone().arg("--no-run");
    if config.runner.verbose || config.runner.dry_run {
        config.runner.run("the host program build", &link)?;
    } else {
        // cargo prints the warnings of what it built again when the tests run: what the link
        // printed is shown only where it failed.
        let (runner, held) = config.runner.holding();
        runner.run("the host program build", &link).inspect_err(|_| held.show())?;
    }
    // The tests are linked while the images are held, and run once they are not: a test that
    // builds this package again would wait for this build for ever.
    drop(hold);
    Ok(cmd)
}

/// Runs the tests [`link_tests`] linked (`tests`, its command), passing them `args`.
pub(crate) fn run_tests(config: &Config, tests: Cmd, args: &[String]) -> Result<()> {
    let cmd = if args.is_empty() { tests } else { tests.arg("--").args(args) };
    config.runner.run("the host program's tests", &cmd)
}

/// Runs a program of the package built: the example `example`, else the binary `bin` (else the
/// package's only or default one), under `runner` where given (its words split at spaces, as
/// cargo's `target.<triple>.runner`), with `args`; its exit code.
pub(crate) fn run(
    config: &Config,
    project: &Project,
    example: Option<&str>,
    bin: Option<&str>,
    runner: Option<&str>,
    args: &[String],
) -> Result<u8> {
    let bin = match example {
        Some(example) => host::example(project, example)?,
        None => host::binary(project, bin)?,
    };
    config.status(&format!("running {}", bin.display()));
    let mut runner = runner.into_iter().flat_map(|r| r.split_whitespace());
    let cmd = match runner.next() {
        Some(program) => Cmd::new(program).args(runner).arg(bin),
        None => Cmd::new(bin),
    };
    let code = config.runner.run_program(&cmd.args(args))?;
    Ok(u8::try_from(code).unwrap_or(1))
}
