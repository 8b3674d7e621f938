//! Sorting the linker's inputs: bitcode to lower, native objects and archives to keep.
//!
//! With `-Clinker-plugin-lto`, rustc hands the linker bitcode for the crate's codegen units,
//! the allocator shim and every rlib built alongside (as archive members beside `lib.rmeta`),
//! and native objects for the standard library's rlibs.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};
use object::ReadRef;
use object::read::ReadCache;
use object::read::archive::ArchiveFile;
use offload_support::command::Runner;

const BITCODE_MAGIC: &[u8] = b"BC\xC0\xDE";
const ARCHIVE_MAGIC: &[u8] = b"!<arch>\n";

/// One bitcode module found among the inputs.
pub(crate) struct Bitcode {
    /// Where it came from, for messages.
    pub(crate) origin: String,
    pub(crate) bytes: Vec<u8>,
}

/// The linker command line with its bitcode taken out.
pub(crate) struct Inputs {
    /// Arguments to keep, with `None` where the lowered object must go.
    pub(crate) args: Vec<Option<String>>,
    pub(crate) bitcode: Vec<Bitcode>,
    /// rustc passed a response file (the line was too long for the system): the link must
    /// pass one too.
    pub(crate) via_response_file: bool,
    /// The link's temporary folder.
    pub(crate) scratch: PathBuf,
}

/// Splits the arguments, extracting bitcode from files and archives. Archives that also hold
/// native members are rebuilt without their bitcode in `scratch`.
pub(crate) fn sort(args: &[String], scratch: &Path, runner: &Runner) -> Result<Inputs> {
    let (expanded, via_response_file) = expand_response_files(args)?;
    let mut out = Inputs {
        args: Vec::new(),
        bitcode: Vec::new(),
        via_response_file,
        scratch: scratch.to_owned(),
    };
    let mut object_slot = false;
    for arg in expanded {
        if is_dropped(&arg) {
            continue;
        }
        let path = Path::new(&arg);
        let is_input = !arg.starts_with('-') && path.is_file();
        let magic = if is_input {
            magic(path).with_context(|| format!("reading {arg}"))?
        } else {
            Vec::new()
        };
        if magic.starts_with(BITCODE_MAGIC) {
            let bytes = std::fs::read(path).with_context(|| format!("reading {arg}"))?;
            out.bitcode.push(Bitcode { origin: arg.clone(), bytes });
            if !object_slot {
                out.args.push(None);
                object_slot = true;
            }
        } else if magic.starts_with(ARCHIVE_MAGIC) {
            // Read as needed: the standard library's archives, tens of MB, hold no bitcode.
            let file = std::fs::File::open(path).with_context(|| format!("reading {arg}"))?;
            let (bitcode, native) = split_archive(&arg, &ReadCache::new(file))?;
            let had_bitcode = !bitcode.is_empty();
            out.bitcode.extend(bitcode);
            if had_bitcode && !object_slot {
                out.args.push(None);
                object_slot = true;
            }
            match (had_bitcode, native.is_empty()) {
                (false, _) => out.args.push(Some(arg)),
                (true, true) => {} // all of it is in the lowered object now
                (true, false) => {
                    let index = out.args.len();
                    out.args.push(Some(rebuild_archive(&arg, native, scratch, index, runner)?))
                }
            }
        } else {
            out.args.push(Some(arg));
        }
    }
    Ok(out)
}

/// Arguments for a plugin-LTO link: the lowered object is native code. rustc's choice of linker
/// (its own lld) stays: no bitcode is left for it to take in.
fn is_dropped(arg: &str) -> bool {
    arg.starts_with("-Wl,-plugin-opt")
}

/// The arguments with `@file`s replaced by their contents, and whether there were any. rustc
/// writes a cc response file one argument a line, escaped as GNU's `buildargv` reads it
/// (backslashes and quotes), which `shell-words` parses.
fn expand_response_files(args: &[String]) -> Result<(Vec<String>, bool)> {
    let mut out = Vec::new();
    let mut found = false;
    for arg in args {
        match arg.strip_prefix('@') {
            Some(file) if Path::new(file).is_file() => {
                found = true;
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("reading response file {file}"))?;
                for line in text.lines().filter(|l| !l.is_empty()) {
                    out.extend(
                        shell_words::split(line)
                            .with_context(|| format!("reading `{line}` in response file {file}"))?,
                    );
                }
            }
            _ => out.push(arg.clone()),
        }
    }
    Ok((out, found))
}

/// Writes `args` as a response file for cc (one argument a line, quoted for `buildargv`).
pub(crate) fn write_response_file(args: &[String], path: &Path) -> Result<()> {
    let text: String = args.iter().map(|a| format!("{}\n", shell_words::quote(a))).collect();
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// A native archive member kept for the link.
struct NativeMember {
    name: String,
    bytes: Vec<u8>,
}

/// The first bytes of a file, enough to tell bitcode and archives from the rest.
fn magic(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut magic = Vec::with_capacity(ARCHIVE_MAGIC.len());
    std::fs::File::open(path)?.take(ARCHIVE_MAGIC.len() as u64).read_to_end(&mut magic)?;
    Ok(magic)
}

/// The bitcode members of an archive and, where it has any, its native members (none where it
/// has no bitcode: the archive stays on the line as it is). Reads member data only then.
fn split_archive<'data, R: ReadRef<'data>>(
    path: &str,
    data: R,
) -> Result<(Vec<Bitcode>, Vec<NativeMember>)> {
    let archive = ArchiveFile::parse(data).with_context(|| format!("reading archive {path}"))?;
    let mut members = Vec::new();
    let mut any_bitcode = false;
    for member in archive.members() {
        let member = member.with_context(|| format!("reading a member of {path}"))?;
        let (offset, size) = member.file_range();
        let head = data
            .read_bytes_at(offset, size.min(BITCODE_MAGIC.len() as u64))
            .map_err(|()| anyhow::anyhow!("reading a member of {path}"))?;
        let is_bitcode = head.starts_with(BITCODE_MAGIC);
        any_bitcode |= is_bitcode;
        members.push((member, is_bitcode));
    }
    let (mut bitcode, mut native) = (Vec::new(), Vec::new());
    if !any_bitcode {
        return Ok((bitcode, native));
    }
    for (member, is_bitcode) in members {
        let name = String::from_utf8_lossy(member.name()).into_owned();
        // An rlib's metadata is for rustc alone, and often most of its bytes: left unread.
        if !is_bitcode && name.starts_with("lib.rmeta") {
            continue;
        }
        let bytes =
            member.data(data).with_context(|| format!("reading {name} in {path}"))?.to_vec();
        if is_bitcode {
            bitcode.push(Bitcode { origin: format!("{path}({name})"), bytes });
        } else {
            native.push(NativeMember { name, bytes });
        }
    }
    Ok((bitcode, native))
}

/// An archive of the native members alone, indexed by the system `ar`.
fn rebuild_archive(
    path: &str,
    members: Vec<NativeMember>,
    scratch: &Path,
    index: usize,
    runner: &Runner,
) -> Result<String> {
    let stem =
        Path::new(path).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    // The argument's position keeps archives of the same name (`/a/libx.a`, `/b/libx.a`) apart.
    let dir = scratch.join(format!("{index}-{stem}.native"));
    std::fs::create_dir_all(&dir)?;
    let mut files: Vec<PathBuf> = Vec::new();
    for (i, m) in members.into_iter().enumerate() {
        // Numbered, so members with the same name stay distinct.
        let file = dir.join(format!("{i}-{}", m.name.replace('/', "_")));
        std::fs::write(&file, m.bytes)?;
        files.push(file);
    }
    let out = scratch.join(format!("{index}-{stem}.native.a"));
    let status = runner
        .status(Command::new("ar").arg("rcs").arg(&out).args(&files))
        .context("rebuilding the archive with binutils' ar")?;
    if !status.success() {
        bail!("ar could not rebuild the native part of {path}");
    }
    Ok(out.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_files_round_trip_spaces_quotes_and_backslashes() {
        let dir = tempfile::tempdir().unwrap();
        let args: Vec<String> =
            ["-o", "build dir/out", "it's", "back\\slash", "\"quoted\""].map(String::from).to_vec();
        let file = dir.path().join("args");
        write_response_file(&args, &file).unwrap();
        let (expanded, found) =
            expand_response_files(&[format!("@{}", file.display()), "-lm".into()]).unwrap();
        assert!(found);
        assert_eq!(expanded[..5], args[..]);
        assert_eq!(expanded[5], "-lm");
    }

    #[test]
    fn rustc_escaping_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("args");
        std::fs::write(&file, "build\\ dir/m.o\n-Wl,--as-needed\n").unwrap();
        let (expanded, _) = expand_response_files(&[format!("@{}", file.display())]).unwrap();
        assert_eq!(expanded, ["build dir/m.o", "-Wl,--as-needed"]);
    }
}
