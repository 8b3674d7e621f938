//! `offload-ld`: the link stage of `cargo offload`, run by rustc as its linker.
//!
//! ```text
//! sort inputs -> link bitcode into one module -> lower offload intrinsics + embed images
//!             -> one object -> cc (the original line, the object in place of the bitcode,
//!                                  plus libomptarget/libomp and their rpath)
//! ```

mod env;
mod images;
mod inputs;

use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context as _, Result, anyhow, bail};
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;

use crate::env::LinkConfig;
use crate::inputs::{Bitcode, Inputs};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
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
    let inputs = inputs::sort(args, scratch.path())?;
    let object = scratch.path().join("offload-lowered.o");
    if !inputs.bitcode.is_empty() {
        lower_to_object(&inputs.bitcode, &config, &object)?;
    }
    let lowered = start.elapsed();
    link(&inputs, &object, &config)?;
    if config.verbose {
        eprintln!(
            "offload-ld: {:.0} ms to gather, lower and compile the bitcode, {:.0} ms to link",
            lowered.as_secs_f64() * 1e3,
            (start.elapsed() - lowered).as_secs_f64() * 1e3
        );
    }
    Ok(())
}

/// Links every bitcode module into one, lowers it and writes `object`.
fn lower_to_object(bitcode: &[Bitcode], config: &LinkConfig, object: &Path) -> Result<()> {
    let cx = Context::create();
    let module = cx.create_module("offload-program");
    for bc in bitcode {
        let buffer = MemoryBuffer::create_from_memory_range_copy(&bc.bytes, &bc.origin);
        let m = Module::parse_bitcode_from_buffer(&buffer, &cx).map_err(|e| {
            anyhow!("reading bitcode {}: {e} (is it from the same rustc as this tool?)", bc.origin)
        })?;
        if module.get_triple().as_str().to_bytes().is_empty() {
            module.set_triple(&m.get_triple());
            module.set_data_layout(&m.get_data_layout());
        }
        module.link_in_module(m).map_err(|e| anyhow!("linking {}: {e}", bc.origin))?;
    }
    if let Some(dir) = &config.save_temps {
        std::fs::create_dir_all(dir)?;
        module.write_bitcode_to_path(dir.join("offload-linked.bc"));
    }
    let report = offload_codegen::lower(
        &cx,
        &module,
        &offload_codegen::Config { abi: config.abi, images: config.images.clone() },
    )?;
    if config.verbose {
        eprintln!(
            "offload-ld: lowered {} preloads, {} releases, {} updates, {} launches of {:?}; embedded {} image(s)",
            report.preloads,
            report.releases,
            report.updates,
            report.launches,
            report.kernels,
            config.images.len()
        );
    }
    images::check_kernels_defined(&report.kernels, &config.images)?;
    // The library loads the runtime and binds the program's calls to it (see `link`).
    let bound = offload_codegen::bind_runtime_through_table(&module)?;
    if config.verbose && bound > 0 {
        eprintln!("offload-ld: {bound} runtime functions bound through the library's loader");
    }
    if let Some(dir) = &config.save_temps {
        module
            .print_to_file(dir.join("offload-lowered.ll"))
            .map_err(|e| anyhow!("saving the lowered IR: {e}"))?;
    }
    offload_codegen::write_object(&module, config.opt_level, object)
}

/// Runs the C compiler driver with the original arguments, the lowered object in place of the
/// bitcode, and the offload runtime.
fn link(inputs: &Inputs, object: &Path, config: &LinkConfig) -> Result<()> {
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
    let mut args: Vec<String> = inputs
        .args
        .iter()
        .map(|a| a.clone().unwrap_or_else(|| object.display().to_string()))
        .collect();
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
        let file = object.with_file_name("link-args");
        inputs::write_response_file(&args, &file)?;
        cmd.arg(format!("@{}", file.display()));
    } else {
        cmd.args(&args);
    }
    if config.verbose {
        eprintln!("offload-ld: {cmd:?}");
    }
    let status = cmd.status().with_context(|| format!("running {}", config.cc))?;
    if !status.success() {
        bail!("{} failed to link the program ({status})", config.cc);
    }
    Ok(())
}
