//! Records the toolchain that builds the runner, and finds rustc's libLLVM at run time.
//!
//! The tests must be compiled by the rustc that built the `offload` rlib they link against, and
//! the in-process lowering runs on that rustc's libLLVM (linked by `offload_codegen`, whose rpath
//! only reaches its own binaries).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    // rustc is asked here, not through `offload_support::toolchain`, which a build script would
    // need as a build-dependency of its own.
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .expect("run rustc --print sysroot");
    assert!(out.status.success(), "`{rustc} --print sysroot` failed");
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).expect("utf-8 sysroot").trim());
    println!("cargo:rustc-env=OFFLOAD_COMPILETEST_SYSROOT={}", sysroot.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", sysroot.join("lib").display());
    println!("cargo:rerun-if-env-changed=RUSTC");
}
