//! The `docs` suite: every Rust block of README.md and docs/*.md compiles. Each block becomes a
//! program of a package generated under `target/docs-check` and type-checked by `cargo check`
//! against `library/offload`:
//!
//! - a block's `// src/kernels.rs` and `// src/main.rs` lines split it into the kernels file
//!   and the program (a block opening with `// src/main.rs` right after a kernels file alone is
//!   that file's program); without them, a block with a kernel is a kernels file, any other the
//!   body of `main` (a fragment), or the whole program where it has its own `fn main`;
//! - what a fragment takes from its surroundings (variables, kernels it launches) is written in
//!   an HTML comment just above the block, which renderers do not show:
//!
//! ```text
//! <!-- context
//! kernels: #[offload::kernel] pub fn relax(y: &mut [f32]) {}
//! main: let (mut ys, steps) = (vec![0.0f32; 8], 1);
//! -->
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

use crate::shell;

/// One Rust block of a document.
#[derive(Debug, Default, PartialEq, Eq)]
struct Block {
    /// `README.md:50`: the document and the line of its fence.
    origin: String,
    kernels: String,
    main: String,
    /// The comment's `kernels:` and `main:` lines.
    kernels_context: String,
    main_context: String,
}

pub fn run(root: &Path) -> Result<()> {
    let mut documents = vec![root.join("README.md")];
    let mut docs: Vec<_> =
        std::fs::read_dir(root.join("docs"))?.flatten().map(|e| e.path()).collect();
    docs.retain(|p| p.extension().is_some_and(|e| e == "md"));
    docs.sort();
    documents.extend(docs);
    let mut blocks = Vec::new();
    for doc in &documents {
        let text = std::fs::read_to_string(doc)?;
        let name = doc.strip_prefix(root).unwrap_or(doc).display().to_string();
        blocks.extend(blocks_of(&name, &text));
    }

    let package = root.join("target/docs-check");
    let bin = package.join("src/bin");
    if bin.exists() {
        std::fs::remove_dir_all(&bin)?;
    }
    std::fs::create_dir_all(&bin)?;
    std::fs::write(package.join("Cargo.toml"), manifest(root))?;
    // The workspace's versions of offload's dependencies, not the newest of each.
    std::fs::copy(root.join("Cargo.lock"), package.join("Cargo.lock"))?;
    for (i, block) in blocks.iter().enumerate() {
        std::fs::write(bin.join(format!("block{i:02}.rs")), program(block))?;
    }
    let mut check = Command::new("cargo");
    check
        .current_dir(&package)
        .args(["check", "--quiet", "--keep-going", "--bins", "--message-format", "short"])
        .env("CARGO_TARGET_DIR", package.join("target"))
        .env_remove("RUSTFLAGS");
    let out = shell::runner().capture(&mut check)?;
    if !out.status.success() {
        bail!(
            "a Rust block of the docs does not compile (target/docs-check/src/bin/blockNN.rs \
             names its document and line):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!("docs: {} Rust blocks of README.md and docs/*.md compile ... ok", blocks.len());
    Ok(())
}

fn manifest(root: &Path) -> String {
    let offload = root.join("library/offload");
    format!(
        "[package]\nname = \"offload-docs-check\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[dependencies]\noffload = {{ path = {:?} }}\n\n\
         [lints.rust]\nunexpected_cfgs = {{ level = \"warn\", check-cfg = [\"cfg(offload_device)\"] }}\n\n\
         [workspace]\n",
        offload.display().to_string()
    )
}

/// The Rust blocks of a Markdown document, each with the context its comment gives.
fn blocks_of(name: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks: Vec<Block> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_start() != "```rust" {
            i += 1;
            continue;
        }
        let fence = i;
        let end = (fence + 1..lines.len()).find(|&j| lines[j].trim_start() == "```");
        let Some(end) = end else { break };
        let mut block = Block { origin: format!("{name}:{}", fence + 1), ..Block::default() };
        split(&lines[fence + 1..end], &mut block);
        context(&lines[..fence], &mut block);
        // A block opening with `// src/main.rs` after one that was a kernels file alone is
        // that file's program.
        let continues = lines[fence + 1].trim_start().starts_with("// src/main.rs");
        match blocks.last_mut() {
            Some(previous) if continues && previous.main.trim().is_empty() => {
                previous.main = block.main;
                previous.main_context += &block.main_context;
                previous.kernels_context += &block.kernels_context;
            }
            _ => blocks.push(block),
        }
        i = end + 1;
    }
    blocks
}

/// The block's lines into its kernels file and its program.
fn split(lines: &[&str], block: &mut Block) {
    let marked = lines.iter().any(|l| l.trim_start().starts_with("// src/"));
    let has_kernel =
        lines.iter().any(|l| l.contains("offload::kernel") || l.contains("offload_kernel]"));
    let mut into_kernels = !marked && has_kernel;
    for line in lines {
        let trimmed = line.trim_start();
        if trimmed.starts_with("// src/kernels.rs") {
            into_kernels = true;
            continue;
        }
        if trimmed.starts_with("// src/main.rs") {
            into_kernels = false;
            continue;
        }
        let part = if into_kernels { &mut block.kernels } else { &mut block.main };
        part.push_str(line);
        part.push('\n');
    }
}

/// The `<!-- context ... -->` comment just above the fence (blank lines between allowed).
fn context(before: &[&str], block: &mut Block) {
    let mut j = before.len();
    while j > 0 && before[j - 1].trim().is_empty() {
        j -= 1;
    }
    if j == 0 || before[j - 1].trim() != "-->" {
        return;
    }
    let Some(start) = (0..j - 1).rev().find(|&k| before[k].trim() == "<!-- context") else {
        return;
    };
    let mut into_kernels = false;
    for line in &before[start + 1..j - 1] {
        let (rest, kernels) = match (line.strip_prefix("kernels:"), line.strip_prefix("main:")) {
            (Some(rest), _) => (rest, Some(true)),
            (_, Some(rest)) => (rest, Some(false)),
            _ => (*line, None),
        };
        into_kernels = kernels.unwrap_or(into_kernels);
        let part = if into_kernels { &mut block.kernels_context } else { &mut block.main_context };
        part.push_str(rest.trim_start());
        part.push('\n');
    }
}

/// The program of a block: the kernels file as `mod kernels`, the program at the root or in
/// `main`.
fn program(block: &Block) -> String {
    let mut out = format!("//! {}\n#![allow(unused, dead_code, clippy::all)]\n\n", block.origin);
    let _ = writeln!(
        out,
        "mod kernels {{\n#![allow(unused_imports)]\n{}{}}}\n",
        block.kernels_context, block.kernels
    );
    if block.main.contains("fn main(") {
        out += &block.main.replace("mod kernels;\n", "");
    } else {
        let _ = writeln!(
            out,
            "fn main() -> Result<(), Box<dyn std::error::Error>> {{\n{}{}    Ok(())\n}}",
            block.main_context, block.main
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_split_into_kernels_and_program_with_their_context() {
        let doc = "text\n<!-- context\nkernels: pub fn helper() {}\nmain: let n = 4;\nlet m = 5;\n-->\n\
                   ```rust\n// src/kernels.rs\n#[offload::kernel]\npub fn k(y: &mut [f32]) {}\n\
                   // src/main.rs\nlet x = n + m;\n```\n\n```rust\nlet y = 1;\n```\n```text\nno\n```\n";
        let blocks = blocks_of("GUIDE.md", doc);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].origin, "GUIDE.md:7");
        assert_eq!(blocks[0].kernels, "#[offload::kernel]\npub fn k(y: &mut [f32]) {}\n");
        assert_eq!(blocks[0].main, "let x = n + m;\n");
        assert_eq!(blocks[0].kernels_context, "pub fn helper() {}\n");
        assert_eq!(blocks[0].main_context, "let n = 4;\nlet m = 5;\n");
        assert_eq!(blocks[1].main, "let y = 1;\n");
        assert!(blocks[1].main_context.is_empty());
        assert!(
            program(&blocks[1])
                .contains("fn main() -> Result<(), Box<dyn std::error::Error>> {\nlet y = 1;\n")
        );
    }
}
