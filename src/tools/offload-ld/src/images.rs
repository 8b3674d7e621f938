//! The device images must define every kernel the program launches: checked at link time, so a
//! kernel missing from an image (a `#[cfg]` the device build does not set, a stale image) is a
//! build error rather than a launch failure on one kind of machine only.

use anyhow::{Context as _, Result, bail};
use offload_codegen::Image;
use offload_support::symbols::defined_symbols;

/// Fails naming the first kernel an image lacks.
pub(crate) fn check_kernels_defined(kernels: &[String], images: &[Image]) -> Result<()> {
    for image in images {
        let defined = symbols(image)?;
        for kernel in kernels {
            if !defined.iter().any(|s| s == kernel) {
                bail!(
                    "kernel `{kernel}` is launched but the {} image does not define it (the device images hold the kernels of the kernels file alone: src/kernels.rs, or the file `[package.metadata.offload] kernels` names, and the modules it declares; a kernel defined elsewhere, in main.rs or in another crate, or behind a #[cfg] the device build does not set, is not in them)",
                    image.triple
                );
            }
        }
    }
    Ok(())
}

/// Fails naming the first kernel the NVIDIA image's PTX lacks: the library's CUDA module is
/// compiled from it, and would lack the kernel where the cubin has it (a PTX file left from
/// another build).
pub(crate) fn check_ptx_defines(kernels: &[String], ptx: &[u8]) -> Result<()> {
    let text = std::str::from_utf8(ptx).context("the NVIDIA image's PTX is not UTF-8 text")?;
    let entries = offload_support::ptx::summarize(text).entries;
    if let Some(kernel) = kernels.iter().find(|k| !entries.contains(k)) {
        bail!(
            "kernel `{kernel}` is launched but the NVIDIA image's PTX does not define it (it is not the PTX the cubin was assembled from: rebuild the device images)"
        );
    }
    Ok(())
}

/// The functions an image defines: the dynamic exports of a shared object, the symbol table of
/// a cubin.
fn symbols(image: &Image) -> Result<Vec<String>> {
    let symbols = defined_symbols(&image.bytes)
        .with_context(|| format!("the {} image is not an ELF file", image.triple))?;
    Ok(symbols.into_iter().filter(|s| s.function).map(|s| s.name).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_missing_from_an_image_is_named_with_where_kernels_come_from() {
        // Any ELF file stands for an image that lacks the kernel.
        let bytes = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let image = Image { triple: "x86_64-unknown-linux-gnu".into(), bytes };
        let e = check_kernels_defined(&["in_main".into()], &[image]).unwrap_err().to_string();
        assert!(e.starts_with("kernel `in_main` is launched but the x86_64-unknown-linux-gnu image does not define it"), "{e}");
        assert!(e.contains("kernels file alone") && e.contains("in main.rs"), "{e}");
        assert!(check_kernels_defined(&[], &[]).is_ok());
    }

    #[test]
    fn the_ptx_must_define_every_kernel_launched() {
        let ptx = b"//\n.version 7.8\n.visible .entry saxpy(\n\t.param .u64 saxpy_param_0\n)\n{\n}\n.visible .entry empty()\n{\n}\n.visible .func helper(\n";
        let kernels = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert!(check_ptx_defines(&kernels(&["saxpy", "empty"]), ptx).is_ok());
        let e = check_ptx_defines(&kernels(&["saxpy", "helper"]), ptx).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "kernel `helper` is launched but the NVIDIA image's PTX does not define it"
            ),
            "{e}"
        );
        assert!(check_ptx_defines(&kernels(&["sax"]), ptx).is_err());
        assert!(check_ptx_defines(&[], b"\xff").is_err());
    }
}
