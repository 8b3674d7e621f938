//! `x.py bundle`: what a GPU machine without Rust needs to run the gpu suite and the examples,
//! in one folder (`build/gpu-bundle`): the programs (NVIDIA-only for the suite, portable for
//! the examples' `x.py run`), the bootstrap binary, the sources their `//@ run:` lines live in,
//! the Debian packages of the runtime and of Open MPI, cargo-offload (for `cargo offload
//! doctor`), and `run-on-gpu.sh`, which unpacks them beside the bundle and runs x.py with the
//! runtime on the library path and Open MPI's `mpirun` on the path (`./run-on-gpu.sh doctor`:
//! cargo offload doctor with that runtime).

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use crate::config::Config;
use crate::programs::{self, Flavor, RUN_SUITE, SM90A_PACKAGE};
use crate::shell;
use crate::tools::Tools;

/// The runtime and what it loads that a GPU machine may lack.
const RUNTIME_DEBS: &[&str] = &["libomp5-19", "libllvm19", "libz3-4"];

/// Open MPI's `mpirun` and libraries, for the programs run under `//@ run: ... np=`: what a run
/// of ranks on one machine loads, without hwloc's plugins or the network transports' libraries
/// (their components fail to load, and are not needed there).
const MPI_DEBS: &[&str] = &[
    "openmpi-bin",
    "openmpi-common",
    "libopenmpi3",
    "libpmix2",
    "libevent-core-2.1-7",
    "libevent-pthreads-2.1-7",
    "libhwloc15",
    "libudev1",
    "libnuma1",
    "libmunge2",
    "libpsm-infinipath1",
    "libpsm2-2",
];

const RUN_SCRIPT: &str = r#"#!/usr/bin/env bash
# Runs ./x.py with the offload runtime unpacked from debs/ (no root, nothing installed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runtime="$here/runtime"
if [ ! -e "$runtime/usr/bin/mpirun" ]; then
    for deb in "$here"/debs/*.deb; do dpkg -x "$deb" "$runtime"; done
    ln -sf mpirun.openmpi "$runtime/usr/bin/mpirun"
fi
export LD_LIBRARY_PATH="$runtime/usr/lib/llvm-19/lib:$runtime/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Open MPI where it was unpacked.
export PATH="$runtime/usr/bin:$PATH" OPAL_PREFIX="$runtime/usr"
cd "$here"
if [ "${1-}" = doctor ]; then
    shift
    exec ./cargo-offload offload doctor --runtime-dir "$runtime/usr/lib/llvm-19/lib" "$@"
fi
exec python3 x.py "$@"
"#;

/// Writes the bundle; `benchmarks` adds the benchmarks' programs and anchors to the folder it is
/// given (the harness, src/tools/bench, builds on this crate, not the other way).
pub fn bundle(
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
        // The examples run anywhere (`./run-on-gpu.sh run NAME`); the tests only on the GPU.
        let flavors: &[Flavor] = if package.starts_with("examples/") {
            &[Flavor::GpuOnly, Flavor::Portable]
        } else {
            &[Flavor::GpuOnly]
        };
        for &flavor in flavors {
            programs::build(root, tools, config, &root.join(package), flavor)?;
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
    // x.py's binaries: the build entry, and the benchmark harness it runs.
    for binary in ["target/debug/bootstrap", "target/debug/bench"] {
        copy(root, &root.join(binary), &out)?;
        shell::runner().run("strip", Command::new("strip").arg(out.join(binary)))?;
    }
    // `./run-on-gpu.sh doctor`: what the GPU machine has (its runtime, ptxas, GPUs).
    let doctor = out.join("cargo-offload");
    std::fs::copy(&tools.cargo_offload, &doctor).context("copying cargo-offload")?;
    shell::runner().run("strip", Command::new("strip").arg(&doctor))?;
    let debs = out.join("debs");
    std::fs::create_dir_all(&debs)?;
    shell::runner().run(
        "apt-get download",
        Command::new("apt-get")
            .current_dir(&debs)
            .arg("download")
            .args(RUNTIME_DEBS)
            .args(MPI_DEBS),
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
pub fn copy(root: &Path, file: &Path, out: &Path) -> Result<()> {
    let Ok(relative) = file.strip_prefix(root) else {
        bail!("{} is outside the repository", file.display())
    };
    let to = out.join(relative);
    std::fs::create_dir_all(to.parent().unwrap_or(out))?;
    std::fs::copy(file, &to).with_context(|| format!("copying {}", file.display()))?;
    Ok(())
}
