//! The codegen suite's step between rustc and FileCheck: the offload lowering, run in process on
//! the IR rustc emitted for a test, with the options of the test's `//@ lower-flags:` lines.
//!
//! ```text
//! //@ lower-flags: --abi=current --image x86_64-unknown-linux-gnu=auxiliary/fake-image.bin
//! ```
//! Image paths are relative to the test's folder.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Parser;
use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use offload_codegen::{Config, Report};
use offload_lower::LowerFlags;

/// The header naming the lowering's options.
const LOWER_FLAGS: &str = "//@ lower-flags:";

/// Where the codegen suite's tests are and where compiletest writes their IR. compiletest calls
/// [`preprocess`] through a plain `fn` pointer, so this is how it finds the test of an `.ll`.
static SUITE: OnceLock<SuiteDirs> = OnceLock::new();

struct SuiteDirs {
    src_base: PathBuf,
    build_base: PathBuf,
}

/// Records the codegen suite's folders for [`preprocess`]; one suite per run.
pub(crate) fn install_suite(src_base: &Path, build_base: &Path) -> Result<()> {
    SUITE
        .set(SuiteDirs { src_base: src_base.to_path_buf(), build_base: build_base.to_path_buf() })
        .map_err(|_| anyhow!("the runner configures one codegen suite per run"))
}

/// compiletest's `llvm_filecheck_preprocess`: lowers the IR of a test (`ll`) into `out`, which
/// FileCheck then reads. A failure fails the test, with the lowering's message.
pub(crate) fn preprocess(ll: &Path, out: &Path) {
    if let Err(e) = lower_test(ll, out) {
        panic!("offload: error: {e:#}");
    }
}

fn lower_test(ll: &Path, out: &Path) -> Result<()> {
    let suite = SUITE.get().context("preprocess called before the codegen suite was configured")?;
    let test = test_source(suite, ll)?;
    let source =
        std::fs::read_to_string(&test).with_context(|| format!("reading {}", test.display()))?;
    let dir = test.parent().context("a test file has a folder")?;
    let flags = lower_flags(&source)?;
    let config =
        flags.config(dir).with_context(|| format!("`{LOWER_FLAGS}` of {}", test.display()))?;
    let mode = if flags.split { Mode::Split } else { Mode::WholeProgram };
    lower_file(ll, out, &config, mode)
        .with_context(|| format!("lowering the IR of {}", test.display()))?;
    Ok(())
}

/// The test an `.ll` was compiled from: compiletest writes `<build_base>/<dir>/<stem>.ll` for
/// `<src_base>/<dir>/<stem>.rs`.
fn test_source(suite: &SuiteDirs, ll: &Path) -> Result<PathBuf> {
    let relative_dir =
        ll.parent().and_then(|d| d.strip_prefix(&suite.build_base).ok()).with_context(|| {
            format!(
                "{} is not under the suite's build folder {}",
                ll.display(),
                suite.build_base.display()
            )
        })?;
    let stem = ll.file_stem().with_context(|| format!("{} has no file name", ll.display()))?;
    let test = suite.src_base.join(relative_dir).join(stem).with_extension("rs");
    if !test.is_file() {
        bail!("no test {} for the IR {}", test.display(), ll.display());
    }
    Ok(test)
}

/// The options of every `//@ lower-flags:` line of `source`, in order: `offload-lower`'s.
fn lower_flags(source: &str) -> Result<LowerFlags> {
    /// The header's words, as a command line.
    #[derive(Parser)]
    #[command(no_binary_name = true)]
    struct Header {
        #[command(flatten)]
        flags: LowerFlags,
    }
    let words: Vec<&str> = source
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix(LOWER_FLAGS))
        .flat_map(str::split_whitespace)
        .collect();
    Header::try_parse_from(&words)
        .map(|header| header.flags)
        .map_err(|e| anyhow!("bad `{LOWER_FLAGS}`: {}", e.render()))
}

/// How a test's module is lowered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `offload-lower`: the module is the whole program.
    WholeProgram,
    /// `offload-lower --split`: one unit, then the program's glue linked in.
    Split,
}

/// Lowers the LLVM IR text `input` into `output`, as `offload-lower input -o output` would.
pub(crate) fn lower_file(
    input: &Path,
    output: &Path,
    config: &Config,
    mode: Mode,
) -> Result<Report> {
    let cx = Context::create();
    let buffer = MemoryBuffer::create_from_file(input)
        .map_err(|e| anyhow!("reading {}: {e}", input.display()))?;
    let module = cx
        .create_module_from_ir(buffer)
        .map_err(|e| anyhow!("parsing IR {}: {e}", input.display()))?;
    let report = match mode {
        Mode::WholeProgram => offload_codegen::lower(&cx, &module, config)?,
        Mode::Split => offload_codegen::lower_split(&cx, &module, config)?.report,
    };
    module.print_to_file(output).map_err(|e| anyhow!("writing {}: {e}", output.display()))?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use offload_codegen::RuntimeAbi;

    use super::*;
    use crate::toolchain;

    #[test]
    fn lower_flags_default_to_llvm19_without_images() {
        let flags = lower_flags("//@ compile-flags: -Copt-level=3\nfn main() {}\n").unwrap();
        assert_eq!(
            flags,
            LowerFlags { abi: RuntimeAbi::Llvm19, images: vec![], cuda_ptx: None, split: false }
        );
    }

    #[test]
    fn lower_flags_are_gathered_from_every_header_line() {
        let source =
            "//@ lower-flags: --abi=current\n//@ lower-flags: --image a=x.bin --image b=y.bin\n";
        let flags = lower_flags(source).unwrap();
        assert_eq!(flags.abi, RuntimeAbi::Current);
        assert_eq!(flags.images, ["a=x.bin", "b=y.bin"]);
    }

    #[test]
    fn unknown_lower_flags_are_refused() {
        let e = lower_flags("//@ lower-flags: --abi=llvm7\n").unwrap_err();
        assert!(format!("{e:#}").contains("llvm7"), "{e:#}");
    }

    #[test]
    fn the_ir_is_found_from_its_test() {
        let dir = tempfile::tempdir().unwrap();
        let (src, build) = (dir.path().join("codegen"), dir.path().join("build"));
        std::fs::create_dir_all(src.join("nested")).unwrap();
        std::fs::write(src.join("nested/preload_array.rs"), "").unwrap();
        let suite = SuiteDirs { src_base: src.clone(), build_base: build.clone() };
        let test = test_source(&suite, &build.join("nested/preload_array.ll")).unwrap();
        assert_eq!(test, src.join("nested/preload_array.rs"));
        assert!(test_source(&suite, &build.join("missing.ll")).is_err());
    }

    /// A call of a `__rust_offload_*` function the lowering does not know fails the lowering,
    /// naming the marker and the function that calls it.
    #[test]
    fn an_unknown_marker_fails_the_lowering() {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("bogus.rs");
        std::fs::write(
            &source,
            r#"
            unsafe extern "C" {
                fn __rust_offload_bogus();
            }

            #[unsafe(no_mangle)]
            pub fn calls_bogus() {
                unsafe { __rust_offload_bogus() }
            }
            "#,
        )
        .unwrap();
        let ll = dir.path().join("bogus.ll");
        let status = Command::new(toolchain::rustc().unwrap())
            .args(["--edition=2024", "--crate-type=lib", "-Copt-level=3", "--emit=llvm-ir", "-o"])
            .arg(&ll)
            .arg(&source)
            .status()
            .unwrap();
        assert!(status.success());
        let e = lower_file(&ll, &dir.path().join("out.ll"), &Config::default(), Mode::WholeProgram)
            .unwrap_err();
        let message = format!("{e:#}");
        assert!(message.contains("unknown offload intrinsic `__rust_offload_bogus`"), "{message}");
        assert!(message.contains("in `calls_bogus`"), "{message}");
        assert!(!dir.path().join("out.ll").exists(), "a failed lowering writes nothing");
    }
}
