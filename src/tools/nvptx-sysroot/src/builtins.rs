//! compiler_builtins from crates.io: fetched through cargo, patched for nvptx64, and given
//! the cfgs its build script would set for nvptx64.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};

use crate::compile::Crate;
use crate::shell::Shell;
use crate::toolchain::Toolchain;

/// A crates.io release that builds with the 1.97 nightly: the version of that nightly's own
/// copy, `library/compiler-builtins` in rust-src.
pub(crate) const VERSION: &str = "0.1.160";

/// libm's `scalbn` calls `i32::clamp`, which the nightly cannot monomorphize from inside
/// compiler_builtins for nvptx64; `max` then `min` computes the same value.
const SCALBN_FILE: &str = "src/math/libm_math/generic/scalbn.rs";
const SCALBN_CLAMP: &str = ".clamp(exp_min, sig_total_bits as i32)";
const SCALBN_MAX_MIN: &str = ".max(exp_min).min(sig_total_bits as i32)";
const SCALBN_CLAMP_CALLS: usize = 2;

/// The cfgs compiler_builtins' `build.rs` sets for nvptx64 at `-Copt-level=3`, plus the
/// default feature; see `build.rs` and `configure.rs` of the crate.
const CFGS: [&str; 7] = [
    // default feature: marks the crate `#![compiler_builtins]`
    r#"feature="compiler-builtins""#,
    // `build.rs`: nvptx has no libc, so `memcpy` and friends come from here
    r#"feature="mem""#,
    // `configure_libm`: use nightly intrinsics in libm
    r#"feature="unstable-intrinsics""#,
    "intrinsics_enabled",
    "arch_enabled",
    // `configure_libm`: opt-level is neither 0 nor 1
    "optimizations_enabled",
    // `configure_f16_f128`: f16 works on nvptx64; f128 does not (LLVM selection failure)
    "f16_enabled",
];

/// Fetches compiler_builtins into `<src>/vendor` with cargo, using a manifest written to
/// `<src>/fetch`; returns the crate's folder.
pub(crate) fn fetch(toolchain: &Toolchain, src: &Path, shell: &Shell) -> Result<PathBuf> {
    let manifest_dir = src.join("fetch");
    fs::create_dir_all(manifest_dir.join("src"))?;
    fs::write(manifest_dir.join("src/lib.rs"), "")?;
    // `[workspace]`: the cache usually lies inside some other workspace (the repository's).
    let manifest = format!(
        "[package]\nname = \"offload-nvptx-sysroot-fetch\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ncompiler_builtins = \"={VERSION}\"\n\n[workspace]\n"
    );
    fs::write(manifest_dir.join("Cargo.toml"), manifest)?;

    let vendor = src.join("vendor");
    let mut cmd = Command::new(toolchain.cargo());
    cmd.current_dir(&manifest_dir)
        .args(["vendor", "--quiet", "--versioned-dirs", "--manifest-path", "Cargo.toml"])
        .arg(&vendor);
    // Offline, cargo can still vendor a copy it downloaded before.
    shell.run(&mut cmd).or_else(|_| shell.run(cmd.arg("--offline"))).with_context(|| {
        format!(
            "cannot fetch compiler_builtins {VERSION} from crates.io (allow cargo network access once, or run `cargo fetch` on a manifest that depends on `compiler_builtins = \"={VERSION}\"`)"
        )
    })?;

    let crate_dir = vendor.join(format!("compiler_builtins-{VERSION}"));
    ensure!(
        crate_dir.join("src/lib.rs").is_file(),
        "cargo vendored no {}/src/lib.rs",
        crate_dir.display()
    );
    Ok(crate_dir)
}

/// Applies the nvptx64 fixes to the vendored crate.
pub(crate) fn patch(crate_dir: &Path) -> Result<()> {
    let path = crate_dir.join(SCALBN_FILE);
    let text =
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let calls = text.matches(SCALBN_CLAMP).count();
    ensure!(
        calls == SCALBN_CLAMP_CALLS,
        "expected {SCALBN_CLAMP_CALLS} `{SCALBN_CLAMP}` in {}, found {calls} (the crate is not the expected version {VERSION})",
        path.display()
    );
    fs::write(&path, text.replace(SCALBN_CLAMP, SCALBN_MAX_MIN))?;
    Ok(())
}

/// How to compile the vendored crate.
pub(crate) fn krate(crate_dir: &Path) -> Crate {
    Crate {
        name: "compiler_builtins",
        root: crate_dir.join("src/lib.rs"),
        cfgs: CFGS.to_vec(),
        deps: &["core"],
    }
}
