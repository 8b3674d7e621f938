//! `config.toml` (copied from `config.example.toml`): paths and choices of the build.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::Deserialize;

#[derive(Debug, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub runtime: Runtime,
    pub nvptx: Nvptx,
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Runtime {
    /// Folder of libomptarget.so.19.1 and libomp.so.5.
    pub dir: PathBuf,
    /// Offload entry layout: "llvm19" or "current".
    pub abi: String,
}

impl Default for Runtime {
    fn default() -> Self {
        Runtime { dir: PathBuf::from("/usr/lib/llvm-19/lib"), abi: "llvm19".into() }
    }
}

#[derive(Debug, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Nvptx {
    /// GPU architecture of the cubin.
    pub target_cpu: String,
    /// A ptxas to use instead of the project's (CUDA 11.8's).
    pub ptxas: Option<PathBuf>,
}

impl Default for Nvptx {
    fn default() -> Self {
        Nvptx { target_cpu: "sm_90".into(), ptxas: None }
    }
}

impl Config {
    /// `config.toml` at the repository root, or the defaults.
    pub fn load(root: &Path) -> Result<Self> {
        let path = root.join("config.toml");
        if !path.exists() {
            return Ok(Config::default());
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        toml::from_str(&text).with_context(|| {
            format!("{} is not a valid config (see config.example.toml)", path.display())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses_to_the_defaults() {
        let text = include_str!("../../../config.example.toml");
        let c: Config = toml::from_str(text).unwrap();
        assert_eq!(c.runtime.dir, Runtime::default().dir);
        assert_eq!(c.runtime.abi, "llvm19");
        assert_eq!(c.nvptx.target_cpu, "sm_90");
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(toml::from_str::<Config>("[runtime]\ndirr = \"/x\"\n").is_err());
    }
}
