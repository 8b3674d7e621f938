//! core and alloc sources rebuilt from the rust-docs component's rustdoc source pages.
//!
//! The pages cover every `.rs` file of `library/{core,alloc}` and of the stdarch and
//! portable-simd files core pulls in by `#[path]`; what they lack are the markdown files
//! read by `include_str!` for doc comments, which are written empty here.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};

use crate::rustdoc_page;

/// The crates whose pages are read (folders under `share/doc/rust/html/src`).
const CRATES: [&str; 2] = ["core", "alloc"];

/// Files the build starts from, relative to `library`; all must have a page.
const ROOT_FILES: [&str; 4] = [
    "core/src/lib.rs",
    "alloc/src/lib.rs",
    "stdarch/crates/core_arch/src/mod.rs",
    "portable-simd/crates/core_simd/src/mod.rs",
];

/// What [`from_rustdoc`] wrote.
pub(crate) struct Reconstruction {
    /// `<dest>/library`, laid out like rust-src's `library`.
    pub(crate) library: PathBuf,
    /// How many source files were rebuilt from pages.
    pub(crate) files: usize,
    /// The empty markdown files written for `include_str!`, relative to `library`.
    pub(crate) stubs: Vec<PathBuf>,
}

/// Rebuilds `<dest>/library/{core,alloc,stdarch,portable-simd}` from the pages under `pages`
/// (`share/doc/rust/html/src`).
pub(crate) fn from_rustdoc(pages: &Path, dest: &Path) -> Result<Reconstruction> {
    let library = dest.join("library");
    let mut written = BTreeSet::new();
    for krate in CRATES {
        let mut page_paths = Vec::new();
        collect_pages(&pages.join(krate), &mut page_paths)?;
        for page_path in page_paths {
            let relative = write_page(&page_path, &library).with_context(|| {
                format!("cannot rebuild a source file from {}", page_path.display())
            })?;
            ensure!(
                written.insert(relative.clone()),
                "two pages name the same file `{}`",
                relative.display()
            );
        }
    }
    for root in ROOT_FILES {
        ensure!(
            written.contains(Path::new(root)),
            "rust-docs has no source page for `library/{root}` (the component looks incomplete: reinstall it with `rustup component add rust-docs --toolchain nightly`)"
        );
    }
    let stubs = stub_markdown(&library, &written)?;
    Ok(Reconstruction { library, files: written.len(), stubs })
}

/// Appends every `*.rs.html` under `dir` to `out`, sorted.
fn collect_pages(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries = fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<Vec<_>, _>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_pages(&path, out)?;
        } else if path.to_string_lossy().ends_with(".rs.html") {
            out.push(path);
        }
    }
    Ok(())
}

/// Writes the file `page_path` shows under `library`; returns its path relative to `library`.
fn write_page(page_path: &Path, library: &Path) -> Result<PathBuf> {
    let html = fs::read_to_string(page_path)?;
    let page = rustdoc_page::parse(&html)?;
    let relative = normalize(Path::new(&page.path))
        .strip_prefix("library")
        .map(Path::to_owned)
        .ok()
        .filter(|relative| is_inside(relative))
        .with_context(|| {
            format!("the page names `{}`, which is not under `library/`", page.path)
        })?;
    let out = library.join(&relative);
    fs::create_dir_all(out.parent().expect("a file path has a parent"))?;
    fs::write(&out, &page.text).with_context(|| format!("cannot write {}", out.display()))?;
    Ok(relative)
}

/// Writes an empty file for each `"*.md"` literal in the rebuilt sources that names a missing
/// file (`include_str!("panic.md")`, or a doc file handed to a macro such as `type_alias!`).
fn stub_markdown(library: &Path, sources: &BTreeSet<PathBuf>) -> Result<Vec<PathBuf>> {
    let mut stubs = BTreeSet::new();
    for source in sources {
        let text = fs::read_to_string(library.join(source))?;
        let dir = source.parent().expect("a file path has a parent");
        for literal in markdown_literals(&text) {
            let relative = normalize(&dir.join(literal));
            if !is_inside(&relative) {
                bail!("`{}` names `{literal}`, outside `library/`", source.display());
            }
            let stub = library.join(&relative);
            if !stub.exists() {
                fs::create_dir_all(stub.parent().expect("a file path has a parent"))?;
                fs::write(&stub, "")?;
                stubs.insert(relative);
            }
        }
    }
    Ok(stubs.into_iter().collect())
}

/// String literals that look like a relative markdown path: `"docs/add.md"`.
fn markdown_literals(text: &str) -> impl Iterator<Item = &str> {
    // Odd pieces lie between quotes; a mis-paired quote yields pieces with spaces, dropped here.
    text.split('"').skip(1).step_by(2).filter(|piece| {
        piece.ends_with(".md")
            && !piece.starts_with('/')
            && !piece.contains(|c: char| c.is_whitespace() || c == '\\' || c == '{')
    })
}

/// `path` with `.` and `a/..` removed, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether a normalized relative path stays inside the folder it is relative to.
fn is_inside(path: &Path) -> bool {
    path.components().all(|component| matches!(component, Component::Normal(_)))
        && path.components().next().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_rustdoc_paths_into_library() {
        let path =
            normalize(Path::new("library/core/src/../../stdarch/crates/core_arch/src/mod.rs"));
        assert_eq!(path, Path::new("library/stdarch/crates/core_arch/src/mod.rs"));
        assert!(!is_inside(&normalize(Path::new("core/../../etc/passwd"))));
    }

    #[test]
    fn finds_markdown_literals() {
        let text = r#"#[doc = include_str!("./docs/add.md")]
type_alias! { "c_char.md", c_char = u8 }
/// See "the README.md file" and "a".
"#;
        assert_eq!(markdown_literals(text).collect::<Vec<_>>(), ["./docs/add.md", "c_char.md"]);
    }
}
