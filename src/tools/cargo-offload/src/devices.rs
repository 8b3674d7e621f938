//! Which device images a build embeds (`--devices`), and their build: the NVIDIA image beside
//! the host-offload one, on two threads.

use std::path::Path;

use anyhow::{Context as _, Result, anyhow};

use crate::config::Config;
use crate::image::{self, Image};
use crate::nvptx;
use crate::project::Project;

/// Which device images to embed.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Devices {
    /// The host-offload image, and the NVIDIA one where ptxas is installed.
    Auto,
    /// The x86_64 host-offload image only.
    Host,
    /// The NVIDIA (nvptx64 cubin) image only: the program runs on a GPU or not at all.
    Cuda,
    /// Both, failing where the NVIDIA image cannot be built.
    All,
}

/// What [`build_images`] built.
pub(crate) struct BuiltImages {
    pub(crate) images: Vec<Image>,
    /// Whether they are those `--devices` asked for (not so where `auto` found no ptxas).
    pub(crate) as_asked: bool,
}

type HostJob<'scope> = std::thread::ScopedJoinHandle<'scope, Result<(Image, Vec<String>)>>;

/// The host-offload image and its kernels, once: `None` where they were already waited for.
fn join_host(job: &mut Option<HostJob<'_>>) -> Option<Result<(Image, Vec<String>)>> {
    let job = job.take()?;
    Some(job.join().map_err(|_| anyhow!("the host-offload image build panicked")).and_then(|r| r))
}

/// The images to embed (`devices`; the NVIDIA one for `target_cpu`, assembled by `ptxas` where
/// given), the NVIDIA one first: the runtime numbers devices in the order images register, so a
/// GPU becomes the default device where there is one. The x86_64 image is always built: its
/// exports are the kernels the NVIDIA image must define. The two build at once (the NVIDIA one
/// waits for the kernels only to check its PTX), except in a dry run, whose plan lists them in
/// order. Both come from `rustc`, the package's toolchain's.
pub(crate) fn build_images(
    project: &Project,
    config: &Config,
    devices: Devices,
    target_cpu: &str,
    ptxas: Option<&Path>,
    rustc: &Path,
) -> Result<BuiltImages> {
    let host_and_kernels = || -> Result<(Image, Vec<String>)> {
        let host = image::build_host_image(project, config, rustc)?;
        let kernels =
            if config.runner.dry_run { Vec::new() } else { image::exported_kernels(&host.path)? };
        Ok((host, kernels))
    };
    let mut opts = nvptx::NvptxOptions::new()?;
    opts.target_cpu = target_cpu.to_owned();
    opts.ptxas = ptxas.map(Path::to_path_buf);
    // What the NVIDIA image needs beyond the host-offload one: ptxas and a nightly rustc. Where
    // `auto` finds either missing it builds the host-offload image alone, and says why.
    let nvptx_rustc = match devices {
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
        return Ok(BuiltImages { images, as_asked: devices == Devices::Host });
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
    let images = match devices {
        Devices::Cuda => vec![nvptx],
        _ => vec![nvptx, host],
    };
    Ok(BuiltImages { images, as_asked: true })
}
