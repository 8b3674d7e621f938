//! `x.py bundle`: what a GPU machine without Rust needs to run the gpu suite and the examples,
//! in one folder (`build/gpu-bundle`): the programs (NVIDIA-only for the suite, portable for
//! `x.py run`), the bootstrap binary, the sources their `//@ run:` lines live in, the
//! runtime's Debian packages, cargo-offload (for `cargo offload doctor`), and `run-on-gpu.sh`,
//! which unpacks them beside the bundle and runs x.py with the runtime on the library path
//! (`./run-on-gpu.sh doctor`: cargo offload doctor with that runtime).

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use crate::config::Config;
use crate::programs::{self, Flavor, RUN_SUITE, SM90A_PACKAGE};
use crate::shell;
use crate::tools::Tools;

/// The runtime and what it loads that a GPU machine may lack.
const RUNTIME_DEBS: &[&str] = &["libomp5-19", "libllvm19", "libz3-4"];

const RUN_SCRIPT: &str = r#"#!/usr/bin/env bash
# Runs ./x.py with the offload runtime unpacked from debs/ (no root, nothing installed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runtime="$here/runtime"
if [ ! -e "$runtime/usr/lib/llvm-19/lib/libomptarget.so.19.1" ]; then
    for deb in "$here"/debs/*.deb; do dpkg -x "$deb" "$runtime"; done
fi
export LD_LIBRARY_PATH="$runtime/usr/lib/llvm-19/lib:$runtime/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$here"
if [ "${1-}" = doctor ]; then
    shift
    exec ./cargo-offload offload doctor --runtime-dir "$runtime/usr/lib/llvm-19/lib" "$@"
fi
exec python3 x.py "$@"
"#;

/// Writes the bundle; `benchmarks` adds the benchmarks' programs and anchors to the folder it is
/// given (`bench::add_to_bundle`: the bench module builds on this one, not the other way).
pub(crate) fn bundle(
    root: &Path,
    config: &Config,
    tools: &Tools,
    benchmarks: impl FnOnce(&Path) -> Result<()>,
) -> Result<()> {
    let out = root.join("build/gpu-bundle");
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("clearing {}", out.display()))?;
    }
    for package in RUN_SUITE {
        programs::build(root, tools, config, &root.join(package), Flavor::GpuOnly)?;
        programs::build(root, tools, config, &root.join(package), Flavor::Portable)?;
        for flavor in [Flavor::GpuOnly, Flavor::Portable] {
            for program in programs::programs(root, &root.join(package), flavor)? {
                copy(root, &program.binary, &out)?;
                copy(root, &program.source, &out)?;
            }
        }
        copy(root, &root.join(package).join("Cargo.toml"), &out)?;
    }
    let sm90a = root.join(SM90A_PACKAGE);
    programs::build(root, tools, config, &sm90a, Flavor::Sm90a)?;
    for program in programs::programs(root, &sm90a, Flavor::Sm90a)? {
        if program.sm90a {
            copy(root, &program.binary, &out)?;
        }
    }
    // The benchmarks and their anchors, for `./run-on-gpu.sh bench`.
    benchmarks(&out)?;
    copy(root, &root.join("x.py"), &out)?;
    let bootstrap = root.join("target/debug/bootstrap");
    copy(root, &bootstrap, &out)?;
    shell::runner().run("strip", Command::new("strip").arg(out.join("target/debug/bootstrap")))?;
    // `./run-on-gpu.sh doctor`: what the GPU machine has (its runtime, ptxas, GPUs).
    let doctor = out.join("cargo-offload");
    std::fs::copy(&tools.cargo_offload, &doctor).context("copying cargo-offload")?;
    shell::runner().run("strip", Command::new("strip").arg(&doctor))?;
    let debs = out.join("debs");
    std::fs::create_dir_all(&debs)?;
    shell::runner().run(
        "apt-get download",
        Command::new("apt-get").current_dir(&debs).arg("download").args(RUNTIME_DEBS),
    )?;
    let script = out.join("run-on-gpu.sh");
    std::fs::write(&script, RUN_SCRIPT)?;
    shell::runner().run("chmod", Command::new("chmod").arg("+x").arg(&script))?;
    println!(
        "bundle: {} (on the GPU machine: ./run-on-gpu.sh test gpu; ./run-on-gpu.sh run saxpy; ./run-on-gpu.sh doctor)",
        out.display()
    );
    Ok(())
}

/// Copies `file` to the same path under `out`.
pub(crate) fn copy(root: &Path, file: &Path, out: &Path) -> Result<()> {
    let Ok(relative) = file.strip_prefix(root) else {
        bail!("{} is outside the repository", file.display())
    };
    let to = out.join(relative);
    std::fs::create_dir_all(to.parent().unwrap_or(out))?;
    std::fs::copy(file, &to).with_context(|| format!("copying {}", file.display()))?;
    Ok(())
}
