//! How a device image is named to the lowering: `TRIPLE=PATH`, as `offload-lower --image` and a
//! codegen test's `//@ lower-flags: --image` take one, and `OFFLOAD_LD_IMAGES` (what
//! cargo-offload tells offload-ld) a list of them apart by `;`.

use std::path::Path;

use anyhow::{Result, anyhow};

/// Between the images of a list.
const SEPARATOR: char = ';';

/// The list naming `images`, each `(triple, path)`.
pub fn list<'a>(images: impl IntoIterator<Item = (&'a str, &'a Path)>) -> String {
    let specs: Vec<String> =
        images.into_iter().map(|(triple, path)| format!("{triple}={}", path.display())).collect();
    specs.join(&SEPARATOR.to_string())
}

/// The `TRIPLE=PATH` items of `list` (empty ones left out).
pub fn split(list: &str) -> impl Iterator<Item = &str> {
    list.split(SEPARATOR).filter(|s| !s.is_empty())
}

/// The triple and the path that `spec` names.
pub fn parse(spec: &str) -> Result<(&str, &str)> {
    spec.split_once('=').ok_or_else(|| anyhow!("`{spec}` is not TRIPLE=PATH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_back() {
        let images = [
            ("nvptx64-nvidia-cuda", Path::new("/b/k.cubin")),
            ("x86_64-unknown-linux-gnu", Path::new("/b/libk.so")),
        ];
        let written = list(images);
        assert_eq!(written, "nvptx64-nvidia-cuda=/b/k.cubin;x86_64-unknown-linux-gnu=/b/libk.so");
        let read: Vec<(&str, &str)> = split(&written).map(|s| parse(s).unwrap()).collect();
        assert_eq!(
            read,
            [("nvptx64-nvidia-cuda", "/b/k.cubin"), ("x86_64-unknown-linux-gnu", "/b/libk.so")]
        );
        assert_eq!(split(";a=b;;").collect::<Vec<_>>(), ["a=b"]);
        assert_eq!(parse("a=b=c").unwrap(), ("a", "b=c"));
        assert_eq!(parse("x86_64").unwrap_err().to_string(), "`x86_64` is not TRIPLE=PATH");
    }
}
