//! What `cargo offload` tells the link stage, through environment variables (the linker is run
//! by rustc, so its arguments are rustc's).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context as _, Result, anyhow};
use offload_codegen::{Image, RuntimeAbi};
use offload_support::command::Runner;
use offload_support::image_arg;

pub(crate) use offload_abi::link_env::{
    ABI, CACHE, CC, CUDA_PTX, IMAGES, OPT_LEVEL, RUNTIME_DIR, SAVE_TEMPS, VERBOSE,
};

const DEFAULT_RUNTIME_DIR: &str = offload_abi::runtime::DEFAULT_DIR;

pub(crate) struct LinkConfig {
    pub(crate) images: Vec<Image>,
    pub(crate) cuda_ptx: Option<Vec<u8>>,
    pub(crate) abi: RuntimeAbi,
    pub(crate) runtime_dir: PathBuf,
    pub(crate) verbose: bool,
    pub(crate) save_temps: Option<PathBuf>,
    pub(crate) cache: Option<PathBuf>,
    pub(crate) opt_level: u8,
    pub(crate) cc: String,
}

impl LinkConfig {
    pub(crate) fn from_env() -> Result<Self> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let images = var(IMAGES)
            .map(|v| image_arg::split(&v).map(read_image).collect::<Result<Vec<_>>>())
            .transpose()?
            .unwrap_or_default();
        let abi = match var(ABI) {
            None => RuntimeAbi::default(),
            Some(name) => name.parse().map_err(|e| anyhow!("{ABI}: {e}"))?,
        };
        let opt_level = match var(OPT_LEVEL) {
            None => 3,
            Some(v) => v
                .parse()
                .ok()
                .filter(|l| *l <= 3)
                .ok_or_else(|| anyhow!("{OPT_LEVEL}={v} is not 0-3"))?,
        };
        let cuda_ptx = var(CUDA_PTX)
            .map(|path| std::fs::read(&path).with_context(|| format!("reading PTX {path}")))
            .transpose()?;
        Ok(LinkConfig {
            images,
            cuda_ptx,
            abi,
            runtime_dir: var(RUNTIME_DIR).unwrap_or_else(|| DEFAULT_RUNTIME_DIR.into()).into(),
            verbose: var(VERBOSE).is_some(),
            save_temps: var(SAVE_TEMPS).map(PathBuf::from),
            cache: var(CACHE).map(PathBuf::from),
            opt_level,
            cc: var(CC).unwrap_or_else(|| "cc".into()),
        })
    }

    /// The runner of the link's commands: each shown on stderr first under [`VERBOSE`].
    pub(crate) fn runner(&self) -> Runner {
        let show: fn(&Command) = |cmd| eprintln!("offload-ld: {cmd:?}");
        Runner { echo: self.verbose.then_some(show) }
    }
}

fn read_image(spec: &str) -> Result<Image> {
    let (triple, path) = image_arg::parse(spec).context(IMAGES)?;
    let bytes = std::fs::read(path).with_context(|| format!("reading device image {path}"))?;
    Ok(Image { triple: triple.to_owned(), bytes })
}
