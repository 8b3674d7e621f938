//! `cargo offload new PATH`: a package that `cargo offload run` runs at once: a saxpy kernel in
//! `src/kernels.rs`, a program that preloads its data and launches it, the `offload` dependency,
//! the lints line its cfgs need, and a `rust-toolchain.toml` that selects nightly (the NVIDIA
//! image's build needs one).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

/// The `offload` library of the repository this tool was built from.
fn default_offload() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../library/offload")
}

/// Creates the package at `path` (which must not exist), depending on the `offload` library at
/// `offload` (default: this tool's repository's); returns the package's name.
pub(crate) fn new_package(path: &Path, offload: Option<&Path>) -> Result<String> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| valid_name(n))
        .with_context(|| {
            format!(
                "`{}` is no package name (letters, digits, `-` and `_`, not starting with a digit)",
                path.display()
            )
        })?
        .to_owned();
    if path.exists() {
        bail!("{} exists already (cargo offload new makes a new folder)", path.display());
    }
    let tried = offload.map_or_else(default_offload, Path::to_path_buf);
    let offload = tried.canonicalize().ok().filter(|o| o.join("Cargo.toml").is_file());
    let Some(offload) = offload else {
        bail!(
            "the offload library is not at {} (pass --offload PATH to its library/offload folder)",
            tried.display()
        );
    };
    let offload = toml::Value::String(offload.display().to_string());
    let files = [
        ("Cargo.toml", manifest(&name, &offload.to_string())),
        ("rust-toolchain.toml", TOOLCHAIN.to_owned()),
        (".gitignore", "/target\n".to_owned()),
        ("src/kernels.rs", KERNELS.to_owned()),
        ("src/main.rs", MAIN.to_owned()),
    ];
    for (file, text) in files {
        let file = path.join(file);
        std::fs::create_dir_all(file.parent().unwrap_or(path))
            .with_context(|| format!("creating {}", path.display()))?;
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(name)
}

/// A name cargo takes for a package.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn manifest(name: &str, offload: &str) -> String {
    format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"

[dependencies]
offload = {{ path = {offload} }}

# The kernels file is also compiled for the device images, under these cfgs.
[lints.rust]
unexpected_cfgs = {{ level = "warn", check-cfg = ["cfg(offload_device)", "cfg(offload_build, values(any()))"] }}
"#
    )
}

const TOOLCHAIN: &str = r#"# The NVIDIA image's build rebuilds core for nvptx64 from the toolchain's sources: a nightly.
[toolchain]
channel = "nightly"
components = ["rust-src"]
"#;

const KERNELS: &str = r#"//! The kernels: compiled for the GPU (and for the CPU's host-offload image) by `cargo offload`.

/// `y = a * x + y`, one thread per element.
#[offload::kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = offload::gpu::global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}
"#;

const MAIN: &str = r#"mod kernels;

use offload::{preload, preload_mut};

fn main() -> Result<(), offload::Error> {
    let n = 1 << 20;
    let xs = vec![1.0f32; n];
    let mut ys = vec![2.0f32; n];
    {
        let x = preload(&xs[..]); // host -> device, once
        let mut y = preload_mut(&mut ys[..]); // host -> device, once
        let blocks = n.div_ceil(256) as u32;
        for _ in 0..100 {
            // No copies: both are on the device already.
            offload::launch!(kernels::saxpy, blocks, 256, (2.0f32, &x, &mut y))?;
        }
    } // `y` dropped: device -> host, once
    assert!(ys.iter().all(|&y| y == 202.0));
    println!("saxpy of {n} values, 100 launches on {}: ok", offload::device_name());
    Ok(())
}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_with_the_offload_dependency_and_a_nightly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("my-gpu_app");
        assert_eq!(new_package(&path, None).unwrap(), "my-gpu_app");
        let manifest = std::fs::read_to_string(path.join("Cargo.toml")).unwrap();
        let parsed: toml::Table = manifest.parse().unwrap();
        let offload = parsed["dependencies"]["offload"]["path"].as_str().unwrap();
        assert!(Path::new(offload).join("src/lib.rs").is_file(), "{offload}");
        assert!(manifest.contains("cfg(offload_device)"), "{manifest}");
        let toolchain = std::fs::read_to_string(path.join("rust-toolchain.toml")).unwrap();
        assert!(toolchain.contains("channel = \"nightly\""), "{toolchain}");
        for file in ["src/main.rs", "src/kernels.rs", ".gitignore"] {
            assert!(path.join(file).is_file(), "{file}");
        }
        // Not twice, nor under a name cargo refuses, nor without the library.
        assert!(new_package(&path, None).unwrap_err().to_string().contains("exists already"));
        let bad = new_package(&dir.path().join("1st"), None).unwrap_err();
        assert!(bad.to_string().contains("is no package name"), "{bad}");
        let missing = new_package(&dir.path().join("other"), Some(dir.path())).unwrap_err();
        assert!(missing.to_string().contains("pass --offload PATH"), "{missing}");
    }
}
