//! `cargo offload doctor`: what building and running an offload program needs here, one line
//! each, with the fix where something is missing: the toolchain (a nightly for the NVIDIA image,
//! its rust-src), the link stage (offload-ld, with its LLVM), the runtime, ptxas and the cubin
//! format it writes, the nvptx sysroot cache, and the GPUs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Result;
// Named `rust` here: `toolchain` is this file's check of it.
use offload_support::toolchain as rust;

use crate::command::{Cmd, Runner};
use crate::nvptx;

/// One finding.
struct Line {
    what: &'static str,
    /// `None`: fine; else the fix.
    fix: Option<String>,
    found: String,
}

/// What the checks found; `Ok(false)` where something a program needs on any machine is
/// missing (the runtime or the link stage).
pub(crate) fn doctor(runtime_dir: &Path, offload_ld: &Path) -> Result<bool> {
    let runner = Runner::default();
    let lines = [
        toolchain(&runner),
        link_stage(&runner, offload_ld),
        runtime(runtime_dir),
        ptxas(&runner),
        sysroots(),
        gpus(&runner),
    ];
    println!("cargo offload doctor:");
    for line in &lines {
        let state = if line.fix.is_some() { "missing" } else { "ok" };
        println!("  {:<13} {state:<8} {}", line.what, line.found);
        if let Some(fix) = &line.fix {
            println!("  {:<13} {:<8} fix: {fix}", "", "");
        }
    }
    let essential = ["link stage", "runtime"];
    Ok(lines.iter().all(|l| l.fix.is_none() || !essential.contains(&l.what)))
}

/// The rustc of this folder's toolchain, and the nightly the NVIDIA image is built with.
fn toolchain(runner: &Runner) -> Line {
    let what = "toolchain";
    let queries = runner.queries();
    let rustc = rust::rustup_rustc(&queries, None, None).unwrap_or_else(|_| PathBuf::from("rustc"));
    let version = match rust::version(&queries, &rustc) {
        Ok(v) => v,
        Err(e) => {
            let fix = "install Rust with rustup (https://rustup.rs), then `rustup toolchain install \
                       nightly --component rust-src`";
            return Line { what, fix: Some(fix.into()), found: format!("no rustc ({e:#})") };
        }
    };
    let Ok((nightly, _)) = nvptx::nightly_rustc(&rustc, runner) else {
        let fix = "rustup toolchain install nightly --component rust-src (the NVIDIA image needs a \
                   nightly; without one programs embed the host-offload image alone)";
        return Line { what, fix: Some(fix.into()), found: format!("{version}, and no nightly") };
    };
    let sources =
        rust::sysroot(&queries, &nightly, None).is_ok_and(|sysroot| rust::has_rust_src(&sysroot));
    let nightly_version = rust::version(&queries, &nightly).unwrap_or_default();
    let mut found = if nightly == rustc {
        version
    } else {
        format!("{version}; the NVIDIA image's: {nightly_version}")
    };
    if sources {
        found += ", with rust-src";
        Line { what, fix: None, found }
    } else {
        found += ", without rust-src (core for nvptx64 is built from it where the toolchain has no nvptx64 standard library)";
        let fix = "rustup component add rust-src --toolchain nightly";
        Line { what, fix: Some(fix.into()), found }
    }
}

/// offload-ld, and whether its LLVM (the toolchain's libLLVM it was linked with) loads.
fn link_stage(runner: &Runner, offload_ld: &Path) -> Line {
    let what = "link stage";
    let runs = runner
        .queries()
        .capture(Command::new(offload_ld).args([offload_abi::nvptx::LD_MODE, "--help"]))
        .is_ok_and(|o| o.status.success());
    if runs {
        Line {
            what,
            fix: None,
            found: format!("offload-ld at {}, its LLVM loads", offload_ld.display()),
        }
    } else {
        let fix = "./x.py install (or cargo install --path src/tools/offload-ld) in the offload \
                   repository: offload-ld goes beside cargo-offload";
        Line {
            what,
            fix: Some(fix.into()),
            found: format!("no working offload-ld at {}", offload_ld.display()),
        }
    }
}

/// libomptarget 19 and libomp.
fn runtime(dir: &Path) -> Line {
    let what = "runtime";
    let missing: Vec<&str> = ["libomptarget.so.19.1", "libomp.so.5"]
        .into_iter()
        .filter(|lib| !dir.join(lib).exists())
        .collect();
    if missing.is_empty() {
        Line {
            what,
            fix: None,
            found: format!("libomptarget 19.1 and libomp in {}", dir.display()),
        }
    } else {
        let fix = "apt-get install libomp5-19 (as root), or pass --runtime-dir to the builds";
        Line {
            what,
            fix: Some(fix.into()),
            found: format!("no {} in {}", missing.join(", "), dir.display()),
        }
    }
}

/// ptxas, its version, and the cubin format it writes (libomptarget 19 loads ELF ABI version 7).
fn ptxas(runner: &Runner) -> Line {
    let what = "ptxas";
    let fix = "cargo offload setup (CUDA 11.8's, from PyPI; the first build of an NVIDIA image \
               installs it too)"
        .to_owned();
    let ptxas = match nvptx::find_ptxas(None) {
        Ok(ptxas) => ptxas,
        Err(e) => return Line { what, fix: Some(fix), found: format!("{e:#}") },
    };
    let version = nvptx::ptxas_version(&ptxas, runner).unwrap_or_else(|e| format!("{e:#}"));
    match cubin_format(&ptxas) {
        Ok(()) => Line {
            what,
            fix: None,
            found: format!(
                "{} ({version}): writes the cubins libomptarget 19 loads",
                ptxas.display()
            ),
        },
        Err(e) => {
            Line { what, fix: Some(fix), found: format!("{} ({version}): {e:#}", ptxas.display()) }
        }
    }
}

/// Assembles an empty kernel and checks the cubin's header as a build does.
fn cubin_format(ptxas: &Path) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let (ptx, cubin) = (dir.path().join("probe.ptx"), dir.path().join("probe.cubin"));
    let cpu = nvptx::DEFAULT_TARGET_CPU;
    std::fs::write(
        &ptx,
        format!(
            ".version 7.8\n.target {cpu}\n.address_size 64\n.visible .entry probe()\n{{\n\tret;\n}}\n"
        ),
    )?;
    let assemble = Cmd::new(ptxas).arg(format!("-arch={cpu}")).arg("-o").arg(&cubin).arg(&ptx);
    Runner::default().run("ptxas", &assemble)?;
    nvptx::check_cubin(&cubin, cpu)
}

/// The nvptx sysroots built (one per toolchain and GPU), in the tool's own folder.
fn sysroots() -> Line {
    let what = "nvptx sysroot";
    let cache = match offload_support::home::sysroot_dir() {
        Ok(dir) => dir,
        Err(e) => return Line { what, fix: Some(format!("{e:#}")), found: String::new() },
    };
    let mut built: Vec<String> = std::fs::read_dir(&cache)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("sysroot").is_dir())
        .filter_map(|e| {
            let stamp = std::fs::read_to_string(e.path().join("stamp")).ok()?;
            let cpu = stamp.lines().find_map(|l| l.strip_prefix("target-cpu: "))?.to_owned();
            let rustc = stamp.lines().find(|l| l.starts_with("rustc "))?.to_owned();
            Some(format!("{rustc} for {cpu}"))
        })
        .collect();
    built.sort();
    let found = if built.is_empty() {
        format!(
            "none cached in {} yet: the first NVIDIA image builds one (about 40 s)",
            cache.display()
        )
    } else {
        format!("{} in {}", built.join("; "), cache.display())
    };
    Line { what, fix: None, found }
}

/// The NVIDIA GPUs the driver reports.
fn gpus(runner: &Runner) -> Line {
    let what = "GPUs";
    let query = runner.queries().capture(
        Command::new("nvidia-smi")
            .args(["--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"]),
    );
    let found = match query {
        Ok(out) if out.status.success() => {
            let gpus: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    let fields: Vec<&str> = l.split(',').map(str::trim).collect();
                    match fields.as_slice() {
                        [name, driver, cc] => {
                            format!("{name} (driver {driver}, compute capability {cc})")
                        }
                        _ => l.trim().to_owned(),
                    }
                })
                .collect();
            if gpus.is_empty() { "none".into() } else { gpus.join("; ") }
        }
        _ => "no NVIDIA GPU (nvidia-smi finds none): programs run on the CPU, through the \
              runtime's host-offload plugin"
            .into(),
    };
    Line { what, fix: None, found }
}
