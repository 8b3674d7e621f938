//! The rustc command lines that build the sysroot crates for nvptx64, one rlib each.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Result, ensure};

use crate::shell::Shell;
use crate::toolchain::TARGET;

/// One crate of the sysroot.
pub(crate) struct Crate {
    pub(crate) name: &'static str,
    /// The crate root, `.../src/lib.rs`.
    pub(crate) root: PathBuf,
    /// `--cfg` values, as cargo features and build scripts would set them.
    pub(crate) cfgs: Vec<&'static str>,
    /// Sysroot crates it needs, built before it.
    pub(crate) deps: &'static [&'static str],
}

impl Crate {
    /// core, from rust-src's `library` folder.
    pub(crate) fn core(library: &Path) -> Self {
        Self { name: "core", root: library.join("core/src/lib.rs"), cfgs: Vec::new(), deps: &[] }
    }

    /// alloc, from rust-src's `library` folder.
    pub(crate) fn alloc(library: &Path) -> Self {
        Self {
            name: "alloc",
            root: library.join("alloc/src/lib.rs"),
            cfgs: Vec::new(),
            deps: &["core", "compiler_builtins"],
        }
    }
}

/// Builds crates into `<sysroot>/lib/rustlib/nvptx64-nvidia-cuda/lib`.
pub(crate) struct SysrootBuilder<'a> {
    pub(crate) rustc: &'a Path,
    pub(crate) target_cpu: &'a str,
    pub(crate) sysroot: PathBuf,
    pub(crate) shell: &'a Shell,
}

impl SysrootBuilder<'_> {
    pub(crate) fn libdir(&self) -> PathBuf {
        self.sysroot.join("lib/rustlib").join(TARGET).join("lib")
    }

    /// Compiles `krate` to `lib<name>.rlib` with embedded bitcode, as the standard library
    /// is built (`-Zforce-unstable-if-unmarked`), finding its deps in the sysroot.
    pub(crate) fn build(&self, krate: &Crate) -> Result<()> {
        let libdir = self.libdir();
        std::fs::create_dir_all(&libdir)?;
        let mut cmd = Command::new(self.rustc);
        cmd.args(["--crate-type", "rlib", "--crate-name", krate.name, "--edition", "2024"])
            .args(["-Zforce-unstable-if-unmarked", "-Copt-level=3"])
            .arg(format!("-Ctarget-cpu={}", self.target_cpu))
            .args(["-Cembed-bitcode=yes", "--target", TARGET, "--cap-lints", "allow"])
            .arg("--sysroot")
            .arg(&self.sysroot)
            .arg("--out-dir")
            .arg(&libdir);
        for dep in krate.deps {
            let mut extern_arg = OsString::from(format!("{dep}="));
            extern_arg.push(rlib(&libdir, dep));
            cmd.arg("--extern").arg(extern_arg);
        }
        for cfg in &krate.cfgs {
            cmd.args(["--cfg", cfg]);
        }
        cmd.arg(&krate.root);
        self.shell.run(&mut cmd)?;

        let output = rlib(&libdir, krate.name);
        ensure!(output.is_file(), "rustc succeeded but wrote no {}", output.display());
        Ok(())
    }
}

fn rlib(libdir: &Path, name: &str) -> PathBuf {
    libdir.join(format!("lib{name}.rlib"))
}
