//! `offload-ld`: the link stage of `cargo offload`, run by rustc as its linker.
//!
//! ```text
//! sort inputs -> each bitcode unit: lower its offload intrinsics, optimise, compile (cached)
//!             -> the glue: offload entries, images, registration, runtime binding (cached)
//!             -> cc (the original line, the objects in place of the bitcode,
//!                    plus libomptarget/libomp and their rpath)
//! ```
//!
//! `offload-ld nvptx IN.bc -o OUT.ptx --cpu sm_90 --kernel K...`, run by `cargo offload`, is
//! the NVIDIA image's link instead (device.rs).
//!
//! The binary is cargo-offload's second one (`src/bin/offload-ld.rs` there), so that one
//! `cargo install` installs both.

mod env;
mod images;
mod inputs;
mod nvptx;
mod units;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context as _, Result, bail};
use offload_codegen::Program;

use crate::env::LinkConfig;
use crate::inputs::{Bitcode, Inputs};
use crate::units::Cache;

/// The `offload-ld` command.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.split_first() {
        Some((mode, rest)) if mode == nvptx::MODE => nvptx::run(rest),
        _ => run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("offload: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<()> {
    let start = std::time::Instant::now();
    let config = LinkConfig::from_env()?;
    let scratch = tempfile::Builder::new()
        .prefix("offload-ld")
        .tempdir()
        .context("creating a temporary folder")?;
    let inputs = inputs::sort(args, scratch.path(), &config.runner())?;
    let cache = Cache::new(&config)?;
    let objects = if inputs.bitcode.is_empty() {
        Vec::new()
    } else {
        compile_program(&inputs.bitcode, &config, &cache, scratch.path())?
    };
    let compiled = start.elapsed();
    link(&inputs, &objects, &config)?;
    cache.prune();
    if config.verbose {
        eprintln!(
            "offload-ld: {:.0} ms to gather, lower and compile the bitcode, {:.0} ms to link",
            compiled.as_secs_f64() * 1e3,
            (start.elapsed() - compiled).as_secs_f64() * 1e3
        );
    }
    Ok(())
}

/// Compiles every bitcode unit and the program's glue: the objects to link in their place.
fn compile_program(
    bitcode: &[Bitcode],
    config: &LinkConfig,
    cache: &Cache,
    scratch: &Path,
) -> Result<Vec<PathBuf>> {
    let (units, tally) = units::compile(bitcode, config, cache, scratch)?;
    let program = Program::new(units.iter().map(|u| &u.record.unit))?;
    images::check_kernels_defined(&program.kernels, &config.images)?;
    // The lowering embeds the PTX beside an NVIDIA image only.
    let cubin = config.images.iter().any(|i| i.triple == offload_abi::nvptx::TRIPLE);
    if let Some(ptx) = config.cuda_ptx.as_ref().filter(|_| cubin) {
        images::check_ptx_defines(&program.kernels, ptx)?;
    }
    let (glue, bound) = units::glue(&program, &units[0].record, config, cache, scratch)?;
    if config.verbose {
        let mut report = offload_codegen::Report::default();
        for u in &units {
            let r = &u.record.unit.report;
            report.preloads += r.preloads;
            report.releases += r.releases;
            report.updates += r.updates;
            report.launches += r.launches;
        }
        eprintln!(
            "offload-ld: lowered {} preloads, {} releases, {} updates, {} launches of {:?}; embedded {} image(s)",
            report.preloads,
            report.releases,
            report.updates,
            report.launches,
            program.kernels,
            config.images.len()
        );
        eprintln!(
            "offload-ld: {} unit(s): {} from the cache, {} compiled on {} thread(s), in {:.0} ms; the glue {}",
            units.len(),
            tally.cached,
            tally.compiled,
            tally.threads,
            tally.time.as_secs_f64() * 1e3,
            match bound {
                None => "from the cache".to_owned(),
                Some(n) =>
                    format!("compiled, {n} runtime functions bound through the library's loader"),
            }
        );
    }
    let mut objects: Vec<PathBuf> = units.into_iter().map(|u| u.object).collect();
    objects.push(glue);
    Ok(objects)
}

/// Runs the C compiler driver with the original arguments, the lowered objects in place of the
/// bitcode, and the offload runtime.
fn link(inputs: &Inputs, objects: &[PathBuf], config: &LinkConfig) -> Result<()> {
    let runtime = &config.runtime_dir;
    for lib in ["libomptarget.so.19.1", "libomp.so.5"] {
        if !runtime.join(lib).exists() {
            bail!(
                "{} not found in {} (install the runtime: apt-get install libomp5-19, or set [runtime] dir in config.toml)",
                lib,
                runtime.display()
            );
        }
    }
    let mut args: Vec<String> = Vec::new();
    for arg in &inputs.args {
        match arg {
            Some(a) => args.push(a.clone()),
            None => args.extend(objects.iter().map(|o| o.display().to_string())),
        }
    }
    // As needed: a program whose calls the library's loader binds (the lowering redirected them
    // through its table) does not name the runtime as a dependency of the dynamic loader, so
    // that a missing runtime is the library's message; one that does not link the library, or
    // native code that calls the runtime, still does. The rpath is where the loader looks.
    args.extend([
        format!("-L{}", runtime.display()),
        "-Wl,--push-state,--as-needed".into(),
        "-l:libomptarget.so.19.1".into(),
        "-l:libomp.so.5".into(),
        "-Wl,--pop-state".into(),
        format!("-Wl,-rpath,{}", runtime.display()),
    ]);
    let mut cmd = Command::new(&config.cc);
    if inputs.via_response_file {
        // The line was too long for the system when rustc ran us: so it is for cc.
        let file = inputs.scratch.join("link-args");
        inputs::write_response_file(&args, &file)?;
        cmd.arg(format!("@{}", file.display()));
    } else {
        cmd.args(&args);
    }
    let status = config.runner().status(&mut cmd)?;
    if !status.success() {
        bail!("{} failed to link the program ({status})", config.cc);
    }
    Ok(())
}
