//! The ptx suite: every file of `<suite>/src/kernels` (but `mod.rs`) is one scenario of the
//! device build, its CHECK lines FileChecked against the PTX of the suite's NVIDIA image, which
//! `x.py test ptx` builds first (one build for all the scenarios: each names its own kernels),
//! and its SM90A lines, where it has them, against the image built for sm_90a.

use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result};
use offload_support::command::Runner;
use offload_support::toolchain;

use crate::suite::Outcome;

/// The prefix of the lines checked against the sm_90a image.
const SM90A: &str = "SM90A";

/// Checks the PTX at `ptx` (and at `ptx_sm90a`) against each scenario of the suite in `dir`
/// whose name contains `filter`, printing one line per scenario (FileCheck's report under a
/// failed one).
pub(crate) fn run(
    dir: &Path,
    ptx: &Path,
    ptx_sm90a: Option<&Path>,
    filter: Option<&str>,
) -> Result<Outcome> {
    let filecheck = toolchain::filecheck()?;
    let kernels = dir.join("src").join("kernels");
    let mut files: Vec<_> = std::fs::read_dir(&kernels)
        .with_context(|| format!("reading {}", kernels.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    files.retain(|p| p.extension().is_some_and(|e| e == "rs") && !p.ends_with("mod.rs"));
    files.sort();
    let mut outcome = Outcome { passed: 0, failed: 0 };
    for file in files {
        let name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let mut out = Runner::default()
            .capture(Command::new(&filecheck).arg(&file).arg("--input-file").arg(ptx))?;
        let text = std::fs::read_to_string(&file)?;
        if out.status.success() && text.contains(&format!("{SM90A}:")) {
            let Some(sm90a) = ptx_sm90a else {
                anyhow::bail!("{name} has {SM90A} lines: give the sm_90a image (--ptx-sm90a)");
            };
            out = Runner::default().capture(
                Command::new(&filecheck)
                    .arg(&file)
                    .arg(format!("--check-prefix={SM90A}"))
                    .arg("--input-file")
                    .arg(sm90a),
            )?;
        }
        if out.status.success() {
            println!("test [ptx] {name} ... ok");
            outcome.passed += 1;
        } else {
            println!("test [ptx] {name} ... FAILED");
            eprintln!("{}", String::from_utf8_lossy(&out.stderr));
            outcome.failed += 1;
        }
    }
    Ok(outcome)
}
