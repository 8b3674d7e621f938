//! The host program: compiled to bitcode by cargo with `offload-ld` as the linker, which
//! lowers it and embeds the device images.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Result, anyhow, bail};
use offload_abi::link_env;
use offload_support::digest::Digest;
use offload_support::image_arg;

use crate::command::Cmd;
use crate::config::Config;
use crate::image::{HOST_TRIPLE, Image, kernels_module, rustflags};
use crate::project::Project;

/// What cargo should do with the host package.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostAction {
    Build,
    Test,
}

/// The cargo command building (or testing) the host program through `offload-ld`.
pub(crate) fn host_command(
    project: &Project,
    images: &[Image],
    config: &Config,
    action: HostAction,
) -> Result<Cmd> {
    let linker = &config.offload_ld;
    if !config.runner.dry_run && !linker.is_file() {
        bail!(
            "the link stage offload-ld is missing at {}: it is cargo-offload's second binary, \
             installed beside it by `cargo install --path <checkout>/src/tools/cargo-offload` \
             (or ./x.py install); OFFLOAD_LD names another",
            linker.display()
        );
    }
    let images_env = image_arg::list(images.iter().map(|i| (i.triple, i.path.as_path())));
    // The NVIDIA image's PTX, where the build wrote it (a dry run writes nothing).
    let ptx = images.iter().find_map(Image::ptx).filter(|p| config.runner.dry_run || p.is_file());
    // Cargo relinks only when its inputs change: make the images, the PTX, the ABI and the
    // linker itself (a new offload-ld lowers and links differently) one of them.
    let stamp = build_stamp(images, ptx.as_deref(), &config.abi, linker);
    let linker_flag = format!("-Clinker={}", linker.display());
    let stamp_flag = format!("--cfg=offload_build=\"{stamp}\"");
    let flags = rustflags(
        project,
        &[
            "-Clinker-plugin-lto",
            &linker_flag,
            "-Clinker-flavor=gcc",
            "--check-cfg=cfg(offload_device)",
            "--check-cfg=cfg(offload_build,values(any()))",
            &stamp_flag,
        ],
    );
    let verb = match action {
        HostAction::Build => "build",
        HostAction::Test => "test",
    };
    let mut cmd = Cmd::new(&config.cargo)
        .args([verb, "--release", "--target", HOST_TRIPLE, "--manifest-path"])
        .arg(&project.manifest)
        .args(config.cargo_flags())
        .args(project.selection.cargo_args())
        .env("CARGO_TARGET_DIR", project.build_dir.join("host"))
        .rustflags(&flags)
        // The kernels module, whose kernels alone the images hold: a kernel elsewhere is a
        // compile error at the kernel.
        .env(offload_abi::kernel::MODULE_ENV, kernels_module(&project.kernels)?.1)
        .env(link_env::IMAGES, images_env)
        .env(link_env::ABI, &config.abi)
        .env(link_env::RUNTIME_DIR, &config.runtime_dir)
        // Objects of units that did not change, kept between links.
        .env(link_env::CACHE, project.build_dir.join("ld-cache"));
    cmd = match ptx {
        Some(ptx) => cmd.env(link_env::CUDA_PTX, ptx),
        None => cmd.env_remove(link_env::CUDA_PTX),
    };
    if config.save_temps {
        cmd = cmd.env(link_env::SAVE_TEMPS, project.build_dir.join("temps").join(&project.name));
    }
    if config.runner.verbose {
        cmd = cmd.env(link_env::VERBOSE, "1");
    }
    Ok(cmd)
}

/// The binary to run: `--bin`, or the package's only binary.
pub(crate) fn binary(project: &Project, bin: Option<&str>) -> Result<PathBuf> {
    let name = match bin {
        Some(b) if project.bins.iter().any(|x| x == b) => b.to_owned(),
        Some(b) => {
            bail!("{} has no binary `{b}` (it has: {})", project.name, project.bins.join(", "))
        }
        None => match (project.bins.as_slice(), &project.default_run) {
            ([only], _) => only.clone(),
            (_, Some(default)) => default.clone(),
            ([], None) => bail!("{} has no binary to run", project.name),
            (many, None) => {
                return Err(anyhow!(
                    "{} has several binaries: pass --bin (one of {}), or name one in `default-run`",
                    project.name,
                    many.join(", ")
                ));
            }
        },
    };
    Ok(release_dir(project).join(name))
}

/// The programs a host build makes: every binary of the package, and the examples asked for
/// (`--example NAME`, or all with `--examples`), but those whose required features are off.
pub(crate) fn programs(project: &Project, examples: &[String], all_examples: bool) -> Vec<PathBuf> {
    let dir = release_dir(project);
    let examples = if all_examples { &project.examples } else { examples };
    let built = |name: &&String| !project.unbuilt.contains(name);
    let bins = project.bins.iter().filter(built).map(|b| dir.join(b));
    bins.chain(examples.iter().filter(built).map(|e| dir.join("examples").join(e))).collect()
}

/// Where the host build puts the package's programs.
pub(crate) fn release_dir(project: &Project) -> PathBuf {
    project.build_dir.join("host").join(HOST_TRIPLE).join("release")
}

/// The example to run: one of the package's.
pub(crate) fn example(project: &Project, name: &str) -> Result<PathBuf> {
    if !project.examples.iter().any(|e| e == name) {
        let have = if project.examples.is_empty() {
            "none".to_owned()
        } else {
            project.examples.join(", ")
        };
        bail!("{} has no example `{name}` (it has: {have})", project.name);
    }
    Ok(release_dir(project).join("examples").join(name))
}

/// What the host program is linked with, as 16 hex digits: the ABI, the linker by size and
/// modification time, the images and the PTX.
fn build_stamp(images: &[Image], ptx: Option<&Path>, abi: &str, linker: &Path) -> String {
    let mut digest = Digest::new();
    digest.part(abi);
    let linker_state = std::fs::metadata(linker).ok().map(|meta| {
        let modified =
            meta.modified().ok().and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok());
        format!("{} bytes, modified {}", meta.len(), modified.map_or(0, |m| m.as_nanos()))
    });
    digest.part(linker_state.unwrap_or_default());
    digest.part((images.len() as u64).to_le_bytes());
    for image in images {
        digest.part(image.triple).part(std::fs::read(&image.path).unwrap_or_default());
    }
    match ptx {
        Some(ptx) => digest.part("ptx").part(std::fs::read(ptx).unwrap_or_default()),
        None => digest.part("no ptx"),
    };
    digest.hex()[..16].to_owned()
}
