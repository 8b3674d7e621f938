//! The nvptx64 device image: the package's kernels compiled by rustc into one self-contained PTX
//! module, checked, and assembled into a cubin by CUDA 11.8's ptxas.
//!
//! ```text
//! nvptx64 sysroot (nvptx_sysroot::ensure: core, alloc, compiler_builtins; cached per toolchain)
//!   -> image crate   <build>/images/<pkg>/nvptx64/{Cargo.toml, lib.rs}  (#![no_std], the kernels)
//!   -> cargo rustc   --target nvptx64-nvidia-cuda, fat LTO, --emit=llvm-bc=<crate>.bc, no linker
//!   -> offload-ld nvptx  the device stage (shared memory, small-loop unrolling, kernel
//!                    options), optimised again and compiled to <crate>.ptx
//!   -> PTX checks    .target, one .entry per kernel, no .extern .func
//!   -> ptxas         -arch=<cpu> -o <crate>.cubin <crate>.ptx (for sm_90a: a stub of it for
//!                    sm_90 whose functions trap; the library runs the kernels from the PTX)
//!   -> cubin check   ELF64, EM_CUDA, ABI version 7 (what libomptarget 19 loads), the SM
//! ```

mod ptx;
mod ptxas;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result, anyhow, bail};
use offload_support::toolchain;

pub(crate) use self::ptx::check_ptx;
use self::ptx::{arch_specific, registration_stub};
pub(crate) use self::ptxas::{
    ensure_ptxas, ensure_ptxas_if_installable, find_ptxas, install_ptxas, ptxas_version,
};
use crate::command::{Cmd, Runner};
use crate::config::Config;
use crate::image::{Image, ImageShape, Made, image_crate_files, write_image_crate};
use crate::project::Project;
pub(crate) use offload_support::cubin::{check_cubin, sm_number};

pub(crate) const NVPTX_TRIPLE: &str = offload_abi::nvptx::TRIPLE;

/// The GPU the image is built for unless told otherwise (the H200 is sm_90).
pub(crate) const DEFAULT_TARGET_CPU: &str = nvptx_sysroot::DEFAULT_TARGET_CPU;

/// Set in the environment of the image build: cargo-offload, run by rustc as the image's linker,
/// is [`stand_in_linker`]. nvptx64's linker is llvm-bitcode-linker, which stock toolchains lack;
/// the bitcode is taken from `--emit=llvm-bc` after fat LTO instead (`offload-ld nvptx` makes the
/// PTX), so the link step only has to leave an output for cargo to see. With one, cargo reruns rustc only when the kernels change (a
/// build after an edit of host code alone skips the 0.2-0.3 s of rustc and ptxas).
pub(crate) const AS_LINKER: &str = "CARGO_OFFLOAD_AS_NVPTX_LINKER";

/// The image's link: writes an empty file where rustc asks for the linked module (`-o PATH`),
/// the mark that tells cargo the build is done.
pub(crate) fn stand_in_linker(args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let args: Vec<std::ffi::OsString> = args.collect();
    let output = args.iter().enumerate().find_map(|(i, a)| {
        if a == "-o" {
            args.get(i + 1).cloned()
        } else {
            a.to_str().and_then(|a| a.strip_prefix("-o")).map(Into::into)
        }
    });
    let Some(output) = output else {
        eprintln!("offload: error: the nvptx64 image's link was given no output (no -o PATH)");
        return ExitCode::FAILURE;
    };
    match std::fs::write(&output, b"") {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("offload: error: writing {}: {e}", Path::new(&output).display());
            ExitCode::FAILURE
        }
    }
}

/// The nvptx64 image crate: `#![no_std]`, and a panicking kernel traps.
const NVPTX_SHAPE: ImageShape = ImageShape {
    target: "nvptx64",
    inner_attrs: "#![no_std]\n#![feature(abi_ptx, stdarch_nvptx)]\n",
    items: "/// A panicking kernel traps: the launch fails (libomptarget 19 then ends the process).\n\
            #[panic_handler]\nfn panic(_: &core::panic::PanicInfo<'_>) -> ! {\n    \
            // SAFETY: `trap` ends the kernel; it has no preconditions.\n    \
            unsafe { core::arch::nvptx::trap() }\n}\n\n",
    profile: "lto = \"fat\"\n",
};

/// Choices for the nvptx64 image.
pub(crate) struct NvptxOptions {
    /// `-Ctarget-cpu` and `ptxas -arch`, e.g. `sm_90`.
    pub(crate) target_cpu: String,
    /// The ptxas to use; found by [`find_ptxas`] when `None`.
    pub(crate) ptxas: Option<PathBuf>,
    /// Where nvptx64 sysroots are cached, one per toolchain and target CPU.
    pub(crate) sysroot_cache: PathBuf,
}

impl NvptxOptions {
    /// sm_90, ptxas found, and the sysroot cache in the tool's own folder
    /// (`<OFFLOAD_HOME>/nvptx-sysroot`, shared by every package and the `nvptx-sysroot` tool).
    pub(crate) fn new() -> Result<Self> {
        Ok(NvptxOptions {
            target_cpu: DEFAULT_TARGET_CPU.to_owned(),
            ptxas: None,
            sysroot_cache: offload_support::home::sysroot_dir()?,
        })
    }
}

/// Builds the nvptx64 image (a cubin) of the package's kernels.
/// `kernels` gives the entry points the PTX must define (those of the x86_64 image), asked for
/// once the PTX is built, so that the x86_64 image can build meanwhile.
pub(crate) fn build_nvptx_image(
    project: &Project,
    config: &Config,
    opts: &NvptxOptions,
    rustc: &Path,
    kernels: impl FnOnce() -> Result<Vec<String>>,
) -> Result<Image> {
    let cpu = opts.target_cpu.as_str();
    if arch_specific(cpu) && sm_number(cpu)? > 90 {
        bail!(
            "the NVIDIA image cannot be built for {cpu}: libomptarget 19 registers it through a \
             cubin of ptxas 11.8, which knows targets up to sm_90 (use sm_90a or an older target \
             cpu)"
        );
    }
    sm_number(cpu)?;
    let dry_run = config.runner.dry_run;

    // 1. ptxas, before anything slow: a missing one should not cost a sysroot build first. The
    //    tool's own is installed on first use.
    let ptxas = if dry_run {
        find_ptxas(opts.ptxas.as_deref())
            .unwrap_or_else(|_| opts.ptxas.clone().unwrap_or_else(|| PathBuf::from("ptxas")))
    } else {
        ensure_ptxas(opts.ptxas.as_deref(), &config.runner)?
    };

    // 2. The sysroot: core, alloc and compiler_builtins for nvptx64, from the same rustc that
    //    builds the image (rlibs only load into the rustc that wrote them).
    let sysroot = if dry_run {
        opts.sysroot_cache.join(nvptx_sysroot::entry_name("<toolchain>", cpu)).join("sysroot")
    } else {
        nvptx_sysroot::ensure(&nvptx_sysroot::Config {
            rustc: rustc.to_path_buf(),
            cache_dir: opts.sysroot_cache.clone(),
            target_cpu: cpu.to_owned(),
            verbose: config.runner.verbose,
        })
        .context("preparing the nvptx64 sysroot")?
    };
    // A path with spaces goes in CARGO_ENCODED_RUSTFLAGS (`Cmd::rustflags`).
    let sysroot_flag = format!("--sysroot={}", sysroot.display());

    // 3. The image crate: the kernels file as a module of a `#![no_std]` cdylib.
    let dir = project.build_dir.join("images").join(&project.name).join("nvptx64");
    let crate_name = write_image_crate(project, &dir, &NVPTX_SHAPE)?;
    let bitcode = dir.join(format!("{crate_name}.bc"));
    let ptx = dir.join(format!("{crate_name}.ptx"));
    let cubin = dir.join(format!("{crate_name}.cubin"));

    // 4. One module: fat LTO over the kernels, `offload`, core and alloc. The proc-macro
    //    `offload-macros` is built for the host (RUSTFLAGS do not reach host units with --target).
    let target_cpu_flag = format!("-Ctarget-cpu={cpu}");
    let mut flags = vec![
        sysroot_flag.as_str(),
        "--cfg",
        "offload_device",
        "--check-cfg=cfg(offload_device)",
        &target_cpu_flag,
    ];
    // A sysroot built again in its folder (a damaged one, a removed cache) holds other crates
    // under the same path: its libraries' record in the flags makes cargo rebuild what was
    // built against the old ones.
    let libraries = sysroot_libraries(&sysroot);
    let libraries_cfg = libraries.map(|digest| format!("--cfg=offload_sysroot=\"{digest}\""));
    if let Some(cfg) = &libraries_cfg {
        flags.extend([cfg.as_str(), "--check-cfg=cfg(offload_sysroot,values(any()))"]);
    }
    let linker = std::env::current_exe().context("finding cargo-offload's own path")?;
    let compile = Cmd::new(&config.cargo)
        .args(["rustc", "--release", "--target", NVPTX_TRIPLE, "--lib", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .args(config.cargo_flags())
        .args(crate::image::feature_args(project))
        .arg("--")
        .arg(format!("--emit=llvm-bc={},link", bitcode.display()))
        .arg(format!("-Clinker={}", linker.display()))
        // Its own target folder: cargo locks a build folder for the whole of a run, and this
        // build runs beside the host-offload image's.
        .env("CARGO_TARGET_DIR", project.build_dir.join("device-nvptx"))
        .env("RUSTC", rustc)
        .rustflags(&flags.iter().map(|f| f.to_string()).collect::<Vec<_>>())
        .env(AS_LINKER, "1");
    config.status(&format!("building the nvptx64 image of {} ({cpu})", project.name));
    // The bitcode is one file whatever the settings, but cargo keeps a fingerprint per setting:
    // after sm_90, sm_80 and sm_90 again, the last would look fresh and leave sm_80's bitcode.
    // So the build's whole command is kept beside it, and a different one (or no bitcode) makes
    // the sources newer than every earlier build.
    let settings = bitcode.with_extension("bc.by");
    // What shapes the PTX: not cargo's verbosity. The sysroot's libraries by size and time too:
    // cargo does not track them, and one rebuilt in place (a new recipe, the same toolchain)
    // must rebuild the image.
    let libs = sysroot.join("lib").join("rustlib").join(NVPTX_TRIPLE).join("lib");
    let lib_files = files_in(&libs);
    let command = format!(
        "RUSTC={} RUSTFLAGS={} --emit=llvm-bc={} -Clinker={} sysroot libraries: {}",
        rustc.display(),
        flags.join(" "),
        bitcode.display(),
        linker.display(),
        files_state(&lib_files)
    );
    let new_settings = !dry_run && !(bitcode.is_file() && stamped(&settings, &command));
    if new_settings {
        remove_stale(&settings)?;
        touch(&dir.join("lib.rs"))?;
    }
    let bitcode_before = modified(&bitcode);
    let before = modified(&ptx);
    config.runner.run("the nvptx64 image build", &compile).map_err(|e| {
        anyhow!(
            "{e:#} (the NVIDIA image compiles the kernels file with `core` alone, without what \
             `std` adds: for `f32::sqrt`, `floor`, `sin` and the like use `offload::gpu::math`; \
             a crate in kernel-dependencies must be `#![no_std]` with the features the program \
             enables for it; `--devices host` builds the host-offload image alone)"
        )
    })?;
    if new_settings {
        std::fs::write(&settings, &command)
            .with_context(|| format!("writing {}", settings.display()))?;
    }

    // 5. The device stage, again where the bitcode, the kernels, the GPU or offload-ld changed.
    let kernels = kernels()?;
    let mut lower = Cmd::new(&config.offload_ld)
        .arg(offload_abi::nvptx::LD_MODE)
        .arg(&bitcode)
        .arg("-o")
        .arg(&ptx)
        .arg(format!("--cpu={cpu}"));
    for kernel in &kernels {
        lower = lower.arg(format!("--kernel={kernel}"));
    }
    // What shapes the PTX, again not the verbosity.
    let lowered_stamp = ptx.with_extension("ptx.by");
    let lowered_by = format!("{} {}", file_state(&config.offload_ld), lower.display());
    if config.runner.verbose {
        lower = lower.arg("--verbose");
    }
    let lowered = !dry_run
        && before.is_some()
        && modified(&bitcode) == bitcode_before
        && before >= bitcode_before
        && stamped(&lowered_stamp, &lowered_by);
    if !lowered {
        if !dry_run {
            remove_stale(&ptx)?;
            remove_stale(&lowered_stamp)?;
        }
        config.runner.run("the nvptx64 device stage", &lower)?;
        if !dry_run {
            std::fs::write(&lowered_stamp, &lowered_by)
                .with_context(|| format!("writing {}", lowered_stamp.display()))?;
        }
    }

    // What ptxas and the runtime need of the module.
    if !dry_run {
        let text = std::fs::read_to_string(&ptx).with_context(|| {
            format!("the nvptx64 device stage wrote no PTX at {}", ptx.display())
        })?;
        check_ptx(&text, cpu, &kernels).with_context(|| format!("checking {}", ptx.display()))?;
    }

    // 6. The cubin, again where the PTX or the assembler changed: of an arch-specific image
    //    (sm_90a), the stub libomptarget registers, its kernels running from the PTX.
    let (assembled, arch) = if arch_specific(cpu) {
        (ptx.with_extension("stub.ptx"), cpu.trim_end_matches('a'))
    } else {
        (ptx.clone(), cpu)
    };
    let assemble =
        Cmd::new(&ptxas).arg(format!("-arch={arch}")).arg("-o").arg(&cubin).arg(&assembled);
    let stamp = cubin.with_extension("cubin.by");
    // The assembler by path, size and modification time: one upgraded in place counts as new.
    let by = format!("{} -arch={cpu}", file_state(&ptxas));
    let fresh = !dry_run
        && before.is_some()
        && modified(&ptx) == before
        && modified(&cubin) >= before
        && stamped(&stamp, &by);
    if !fresh {
        if !dry_run {
            remove_stale(&cubin)?;
            remove_stale(&stamp)?;
            if assembled != ptx {
                let text = std::fs::read_to_string(&ptx)
                    .with_context(|| format!("reading {}", ptx.display()))?;
                std::fs::write(&assembled, registration_stub(&text, cpu))
                    .with_context(|| format!("writing {}", assembled.display()))?;
            }
        }
        config.runner.run("ptxas", &assemble)?;
        if !dry_run {
            std::fs::write(&stamp, &by).with_context(|| format!("writing {}", stamp.display()))?;
        }
    }
    if !dry_run && let Err(e) = check_cubin(&cubin, cpu) {
        // Leave no cubin that a later stage could embed and the runtime then refuse.
        let _ = std::fs::remove_file(&cubin);
        return Err(e);
    }
    let mut made = Made {
        dep_info: project
            .build_dir
            .join("device-nvptx")
            .join(NVPTX_TRIPLE)
            .join("release")
            .join(format!("{crate_name}.d")),
        tools: vec![rustc.to_path_buf(), ptxas, config.offload_ld.clone()],
        outputs: image_crate_files(&dir),
    };
    made.outputs.extend([bitcode, settings, ptx, lowered_stamp, stamp]);
    if arch_specific(cpu) {
        made.outputs.push(assembled);
    }
    // The sysroot: its stamp, its folder of libraries (whose time changes with what it holds)
    // and each library.
    made.tools.extend(sysroot.parent().map(|d| d.join("stamp")));
    made.tools.extend(lib_files);
    made.tools.push(libs);
    Ok(Image { triple: NVPTX_TRIPLE, path: cubin, made })
}

/// A digest of the record of a cached sysroot's libraries (none for a toolchain's own).
fn sysroot_libraries(sysroot: &Path) -> Option<String> {
    let record = std::fs::read(sysroot.parent()?.join("libraries")).ok()?;
    Some(blake3::hash(&record).to_hex()[..16].to_owned())
}

/// The rustc of the package's toolchain: `RUSTC`, else `rustup which rustc` in the package's
/// folder (so its `rust-toolchain.toml` counts), else the one on `PATH`.
pub(crate) fn find_rustc(project: &Project, config: &Config) -> Result<PathBuf> {
    if let Some(rustc) = std::env::var_os("RUSTC").filter(|r| !r.is_empty()) {
        return Ok(PathBuf::from(rustc));
    }
    let queries = config.runner.queries();
    if let Ok(path) = toolchain::rustup_rustc(&queries, project.manifest.parent(), None) {
        return Ok(path);
    }
    let sysroot = toolchain::sysroot(&queries, Path::new("rustc"), None)
        .context("finding rustc (set RUSTC to a nightly rustc, or install one with rustup)")?;
    Ok(toolchain::rustc_in(&sysroot))
}

/// The rustc the NVIDIA image is built with: the package's where it is a nightly (core and alloc
/// are rebuilt for nvptx64 with nightly flags), else rustup's nightly toolchain, said on stderr
/// (`Ok((rustc, Some(why)))`); an error naming the command to run where there is none.
pub(crate) fn nightly_rustc(rustc: &Path, runner: &Runner) -> Result<(PathBuf, Option<String>)> {
    let queries = runner.queries();
    let version = toolchain::version(&queries, rustc)?;
    if version.contains("-nightly") || version.contains("-dev") {
        return Ok((rustc.to_path_buf(), None));
    }
    match toolchain::rustup_rustc(&queries, None, Some("nightly")) {
        Ok(nightly) => {
            let why = format!(
                "the NVIDIA image is built with rustup's nightly toolchain ({}): the package's \
                 rustc is {version}, and the image's build of core for nvptx64 needs a nightly",
                nightly.display()
            );
            Ok((nightly, Some(why)))
        }
        Err(_) => bail!(
            "the NVIDIA image needs a nightly Rust toolchain: the package's rustc is {version}, and \
             rustup has no nightly (install one: `rustup toolchain install nightly --component \
             rust-src`; or give the package a rust-toolchain.toml with `channel = \"nightly\"`)"
        ),
    }
}

/// The files of `dir`, in name order (none where it cannot be read).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).into_iter().flatten().filter_map(|e| Some(e.ok()?.path())).collect();
    files.sort();
    files
}

/// `files` by name, size and modification time.
fn files_state(files: &[PathBuf]) -> String {
    let state = |file: &PathBuf| {
        let meta = std::fs::metadata(file).ok()?;
        let name = file.file_name()?.to_string_lossy();
        Some(format!("{name} {} {:?}", meta.len(), meta.modified().ok()?))
    };
    files.iter().filter_map(state).collect::<Vec<_>>().join(", ")
}

/// A tool by path, size and modification time, for a stamp: one rebuilt or upgraded in place
/// counts as new.
fn file_state(path: &Path) -> String {
    let state = std::fs::metadata(path)
        .map(|m| format!("{} bytes, modified {:?}", m.len(), m.modified().ok()))
        .unwrap_or_default();
    format!("{} ({state})", path.display())
}

/// Whether the stamp file `path` holds `text`: the settings of the output beside it.
fn stamped(path: &Path, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s == text)
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn touch(path: &Path) -> Result<()> {
    std::fs::File::options()
        .append(true)
        .open(path)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()))
        .with_context(|| format!("touching {}", path.display()))
}

/// Removes an output of an earlier build, so that a step that writes nothing cannot pass
/// the old file off as new.
fn remove_stale(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::process::ExitCode;

    use super::stand_in_linker;

    #[test]
    fn the_stand_in_linker_leaves_the_output_cargo_looks_for() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("image.ptx");
        let args = ["--target", "nvptx64-nvidia-cuda", "-o", out.to_str().unwrap(), "a.o"];
        assert_eq!(stand_in_linker(args.iter().map(OsString::from)), ExitCode::SUCCESS);
        assert_eq!(std::fs::read(&out).unwrap(), b"");
        let joined = dir.path().join("joined.ptx");
        let args = [format!("-o{}", joined.display())];
        assert_eq!(stand_in_linker(args.iter().map(OsString::from)), ExitCode::SUCCESS);
        assert!(joined.is_file());
        assert_eq!(stand_in_linker(["a.o"].iter().map(OsString::from)), ExitCode::FAILURE);
    }
}
