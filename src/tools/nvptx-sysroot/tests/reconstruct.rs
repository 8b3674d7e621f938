//! Rebuilds core and alloc sources from the nightly's rust-docs pages (a few seconds, no
//! compile) and checks the root files against their pages: same line count, plausible text,
//! and the doc-only markdown files written empty.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The rustc of the nightly toolchain, which carries rust-docs.
fn nightly_rustc() -> PathBuf {
    let output = Command::new("rustup")
        .args(["which", "rustc", "--toolchain", "nightly"])
        .output()
        .expect("rustup runs");
    assert!(output.status.success(), "no nightly toolchain: {output:?}");
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

fn sysroot(rustc: &Path) -> PathBuf {
    let output = Command::new(rustc).args(["--print", "sysroot"]).output().unwrap();
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// How many numbered lines a rustdoc source page has.
fn numbered_lines(page: &Path) -> usize {
    fs::read_to_string(page).unwrap().matches(" data-nosnippet>").count()
}

#[test]
fn rebuilds_core_and_alloc_from_rust_docs() {
    let rustc = nightly_rustc();
    let pages = sysroot(&rustc).join("share/doc/rust/html/src");
    let dest = tempfile::tempdir().unwrap();

    let library = nvptx_sysroot::reconstruct_sources(&rustc, dest.path()).unwrap();

    assert_eq!(library, dest.path().join("library"));
    for (page, file, needle) in [
        ("core/lib.rs.html", "core/src/lib.rs", "#![no_core]"),
        ("alloc/lib.rs.html", "alloc/src/lib.rs", "#![no_std]"),
        (
            "core/stdarch/crates/core_arch/src/mod.rs.html",
            "stdarch/crates/core_arch/src/mod.rs",
            "pub mod nvptx",
        ),
    ] {
        let text = fs::read_to_string(library.join(file)).unwrap();
        assert_eq!(text.lines().count(), numbered_lines(&pages.join(page)), "{file}");
        assert!(text.contains(needle), "{file} lacks `{needle}`");
        assert!(!text.contains("&amp;") && !text.contains("<span"), "{file} still holds HTML");
    }
    // A doc file read by `#[doc = include_str!("c_void.md")]`: not in the pages, stubbed.
    assert_eq!(fs::read_to_string(library.join("core/src/ffi/c_void.md")).unwrap(), "");
}
