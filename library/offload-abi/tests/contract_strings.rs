//! Each name of the contract is spelled once, in this crate: the library, the macros, the
//! lowering and the tools take it from here. A copy elsewhere in their sources (outside
//! comments and tests) is allowed only where a literal is needed, a `link_name` or the name of a
//! `no_mangle` entry point, and there it is checked against this crate's constant
//! (`offload_abi::same`) in the same file.

use std::path::{Path, PathBuf};

/// The contract's names, as they would appear in a stray copy.
const NAMES: &[&str] = &[
    offload_abi::intrinsics::PRELOAD,
    offload_abi::intrinsics::RELEASE,
    offload_abi::intrinsics::UPDATE,
    offload_abi::intrinsics::LAUNCH_PREFIX,
    offload_abi::intrinsics::CUDA_IMAGE,
    offload_abi::intrinsics::CUDA_PTX,
    offload_abi::kernel::MARKER_PREFIX,
    offload_abi::kernel::ATTRS_PREFIX,
    offload_abi::nvptx::TRIPLE,
    offload_abi::nvptx::SHARED_MEMORY_FN,
    offload_abi::nvptx::DEVICE_ENVIRONMENT,
    offload_abi::entry::LOAD_RUNTIME,
    offload_abi::entry::BEFORE_CUDA_REGISTER,
    offload_abi::link_env::IMAGES,
    offload_abi::link_env::CUDA_PTX,
    offload_abi::link_env::ABI,
    offload_abi::link_env::RUNTIME_DIR,
    offload_abi::link_env::VERBOSE,
    offload_abi::link_env::SAVE_TEMPS,
    offload_abi::link_env::OPT_LEVEL,
    offload_abi::link_env::CACHE,
    offload_abi::link_env::CC,
];

/// Names that are also identifiers: the library's entry points are functions of that name.
const IDENTIFIERS: &[&str] =
    &[offload_abi::entry::LOAD_RUNTIME, offload_abi::entry::BEFORE_CUDA_REGISTER];

/// The sources of the crates that share the contract, tests left out.
fn sources(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                if !matches!(name, "tests" | "target") {
                    walk(&path, out);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    for dir in ["library", "compiler", "src"] {
        walk(&root.join(dir), &mut out);
    }
    out
}

#[test]
fn every_contract_name_is_spelled_once() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).canonicalize().unwrap();
    let root = here.join("../..").canonicalize().unwrap();
    let own = here.join("src");
    let mut strays = Vec::new();
    for file in sources(&root) {
        if file.starts_with(&own) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        // Test modules inside a source file are tests too.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") {
                continue;
            }
            for name in NAMES {
                let quoted = format!("\"{name}");
                // A literal the file checks against the constant: `same(CONST, "name")`.
                let checked = compact.contains("offload_abi::same(")
                    && compact.contains(&format!(",\"{name}\"))"));
                let named = IDENTIFIERS.contains(name) && line.contains(&format!("fn {name}("));
                if (line.contains(&quoted) || named) && !checked {
                    strays.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        strays.is_empty(),
        "contract names spelled outside offload-abi:\n{}",
        strays.join("\n")
    );
}
