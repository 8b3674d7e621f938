//! The symbols a device image defines: what the kernels a program launches are checked against.

use anyhow::Result;
use object::{Object as _, ObjectSymbol};

/// A symbol an image defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// Code (a kernel's entry point), not data (such as the x86_64 image's kernel markers).
    pub function: bool,
}

/// The symbols the ELF file `elf` defines: those of its dynamic table (a shared object's
/// exports: the x86_64 image), or where that defines none, those of its symbol table (a cubin,
/// which has no dynamic table).
pub fn defined_symbols(elf: &[u8]) -> Result<Vec<Symbol>> {
    let file = object::File::parse(elf)?;
    let dynamic = definitions(file.dynamic_symbols());
    Ok(if dynamic.is_empty() { definitions(file.symbols()) } else { dynamic })
}

fn definitions<'data, S: ObjectSymbol<'data>>(symbols: impl Iterator<Item = S>) -> Vec<Symbol> {
    symbols
        .filter(|s| s.is_definition())
        .filter_map(|s| {
            let function = s.kind() == object::SymbolKind::Text;
            Some(Symbol { name: s.name().ok()?.to_owned(), function })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_defines_its_functions() {
        // This test's own executable stands for an image.
        let bytes = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let symbols = defined_symbols(&bytes).unwrap();
        assert!(symbols.iter().any(|s| s.function), "{symbols:?}");
        assert!(symbols.iter().all(|s| !s.name.is_empty()));
    }

    #[test]
    fn what_is_not_elf_is_an_error() {
        assert!(defined_symbols(b"// PTX\n.version 7.8\n").is_err());
    }
}
