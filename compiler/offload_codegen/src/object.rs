//! From the lowered module to an object file for the host.

use std::path::Path;

use anyhow::{Result, anyhow};
use inkwell::OptimizationLevel;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target};

/// Optimises the module at `opt_level` (0 to 3, LLVM's `default<On>` pipeline) and writes an
/// object file for its own triple.
pub fn write_object(module: &Module<'_>, opt_level: u8, path: &Path) -> Result<()> {
    Target::initialize_x86(&InitializationConfig::default());
    let triple = module.get_triple();
    let target = Target::from_triple(&triple).map_err(|e| anyhow!("no LLVM target for {triple}: {e}"))?;
    let level = match opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    let machine = target
        .create_target_machine(&triple, "x86-64", "", level, RelocMode::PIC, CodeModel::Default)
        .ok_or_else(|| anyhow!("cannot create a target machine for {triple}"))?;
    if opt_level > 0 {
        module
            .run_passes(&format!("default<O{}>", opt_level.min(3)), &machine, PassBuilderOptions::create())
            .map_err(|e| anyhow!("optimising the lowered module: {e}"))?;
    }
    machine.write_to_file(module, FileType::Object, path).map_err(|e| anyhow!("writing {}: {e}", path.display()))
}
