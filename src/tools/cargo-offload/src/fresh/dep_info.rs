//! cargo's dep-info files, which list the sources a build read: the inputs of both records.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

/// The sources the dep-info file at `path` lists, each of which must exist: one that does not
/// is a path the parser misread, and the record would not see the real file.
pub(super) fn dep_info_inputs(path: &Path) -> Result<Vec<PathBuf>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let sources = dep_info_sources(&text).with_context(|| format!("{}", path.display()))?;
    if let Some(missing) = sources.iter().find(|p| !p.exists()) {
        bail!("{} lists {}, which does not exist", path.display(), missing.display());
    }
    Ok(sources)
}

/// The source files a cargo dep-info file lists (`<output>: <source> <source>...`, one line per
/// output, spaces in names escaped with a backslash). A relative path, which `build.dep-info-basedir` makes, is
/// an error: the record would not know where it lies.
pub(super) fn dep_info_sources(text: &str) -> Result<Vec<PathBuf>> {
    let mut sources = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        // The target ends at the first colon not escaped and followed by a space or the end.
        let Some(colon) = unescaped_colon(line) else { continue };
        let mut word = String::new();
        let mut chars = line[colon + 1..].chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                // cargo escapes spaces only; any other backslash is part of the name.
                '\\' if chars.peek() == Some(&' ') => word.extend(chars.next()),
                c if c.is_whitespace() => {
                    if !word.is_empty() {
                        sources.push(PathBuf::from(std::mem::take(&mut word)));
                    }
                }
                c => word.push(c),
            }
        }
        if !word.is_empty() {
            sources.push(PathBuf::from(word));
        }
    }
    if let Some(relative) = sources.iter().find(|p| p.is_relative()) {
        bail!("it names {} relative to a folder it does not give", relative.display());
    }
    Ok(sources)
}

fn unescaped_colon(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b' ') => i += 2,
            b':' if bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()) => return Some(i),
            _ => i += 1,
        }
    }
    None
}
