//! The device images must define every kernel the program launches: checked at link time, so a
//! kernel missing from an image (a `#[cfg]` the device build does not set, a stale image) is a
//! build error rather than a launch failure on one kind of machine only.

use anyhow::{Context as _, Result, bail};
use object::{Object, ObjectSymbol};
use offload_codegen::Image;

/// Fails naming the first kernel an image lacks.
pub(crate) fn check_kernels_defined(kernels: &[String], images: &[Image]) -> Result<()> {
    for image in images {
        let defined = symbols(image)?;
        for kernel in kernels {
            if !defined.iter().any(|s| s == kernel) {
                bail!(
                    "kernel `{kernel}` is launched but the {} image does not define it (is it behind a #[cfg] the device build does not set? rebuild with cargo offload)",
                    image.triple
                );
            }
        }
    }
    Ok(())
}

/// The functions an image defines: the dynamic exports of a shared object, the symbol table of
/// a cubin.
fn symbols(image: &Image) -> Result<Vec<String>> {
    let file = object::File::parse(&*image.bytes)
        .with_context(|| format!("the {} image is not an ELF file", image.triple))?;
    let dynamic: Vec<String> = names(file.dynamic_symbols());
    Ok(if dynamic.is_empty() { names(file.symbols()) } else { dynamic })
}

fn names<'data, S: ObjectSymbol<'data>>(symbols: impl Iterator<Item = S>) -> Vec<String> {
    symbols
        .filter(|s| s.is_definition() && s.kind() == object::SymbolKind::Text)
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect()
}
