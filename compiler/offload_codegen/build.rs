//! Links the lowering against the libLLVM of the rustc that builds it: the same LLVM that
//! writes the bitcode we read (inkwell's `*-no-llvm-linking` feature leaves this to us).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .expect("run rustc --print sysroot");
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).expect("utf-8 sysroot").trim());
    let lib = sysroot.join("lib");
    let stem = std::fs::read_dir(&lib)
        .expect("read the toolchain's lib folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| n.starts_with("libLLVM-") && n.ends_with(".so"))
        .unwrap_or_else(|| {
            panic!("no libLLVM-*.so in {}: the toolchain must ship its LLVM", lib.display())
        });
    let stem = stem.trim_start_matches("lib").trim_end_matches(".so");
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=dylib={stem}");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    // For dependents' build scripts: `rustc-link-arg` reaches only this package's binaries.
    println!("cargo:lib_dir={}", lib.display());
    println!("cargo:rerun-if-env-changed=RUSTC");
}
