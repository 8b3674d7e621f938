//! The lowering's options as a command line gives them: `offload-lower`'s, and those of a codegen
//! test's `//@ lower-flags:` lines (compiletest), one set of flags for both. The lowering itself
//! (`offload_codegen`) parses nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use offload_support::image_arg;

use offload_codegen::{Config, Image, RuntimeAbi};

/// What to lower for: the runtime's ABI, the device images, the PTX, one unit or the program.
#[derive(clap::Args, Debug, PartialEq, Eq)]
pub struct LowerFlags {
    /// Offload entry layout of the runtime: llvm19 or current.
    #[arg(long, default_value = "llvm19")]
    pub abi: RuntimeAbi,
    /// A device image to embed, as TRIPLE=PATH (repeatable).
    #[arg(long = "image", value_name = "TRIPLE=PATH")]
    pub images: Vec<String>,
    /// The PTX the NVIDIA image was assembled from, embedded for the library's own CUDA
    /// module (the driver compiles it).
    #[arg(long, value_name = "PATH")]
    pub cuda_ptx: Option<PathBuf>,
    /// Lower the module as one unit of a program, then append the program's glue made from
    /// it (as `offload-ld` does with each codegen unit).
    #[arg(long)]
    pub split: bool,
}

impl LowerFlags {
    /// The lowering's configuration, the images and the PTX read from their paths relative to
    /// `dir` (an empty path: the working folder).
    pub fn config(&self, dir: &Path) -> Result<Config> {
        let images = self
            .images
            .iter()
            .map(|spec| {
                let (triple, path) = image_arg::parse(spec).context("--image")?;
                let path = dir.join(path);
                let bytes = std::fs::read(&path)
                    .with_context(|| format!("reading image {}", path.display()))?;
                Ok(Image { triple: triple.to_owned(), bytes })
            })
            .collect::<Result<Vec<_>>>()?;
        let cuda_ptx = self
            .cuda_ptx
            .as_ref()
            .map(|path| {
                let path = dir.join(path);
                std::fs::read(&path).with_context(|| format!("reading PTX {}", path.display()))
            })
            .transpose()?;
        Ok(Config { abi: self.abi, images, cuda_ptx })
    }
}
