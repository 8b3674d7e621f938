//! From the lowered module to an object file for the host.

use std::path::Path;

use anyhow::{Result, anyhow};
use inkwell::OptimizationLevel;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target};

use crate::appending;

/// Optimises the module at `opt_level` (0 to 3, LLVM's `default<On>` pipeline) and writes an
/// object file for its own triple.
pub fn write_object(module: &Module<'_>, opt_level: u8, path: &Path) -> Result<()> {
    Target::initialize_x86(&InitializationConfig::default());
    let triple = module.get_triple();
    let target =
        Target::from_triple(&triple).map_err(|e| anyhow!("no LLVM target for {triple}: {e}"))?;
    let level = match opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    let machine = target
        .create_target_machine(&triple, "x86-64", "", level, RelocMode::PIC, CodeModel::Default)
        .ok_or_else(|| anyhow!("cannot create a target machine for {triple}"))?;
    ctors_to_init_array(module);
    if opt_level > 0 {
        module
            .run_passes(
                &format!("default<O{}>", opt_level.min(3)),
                &machine,
                PassBuilderOptions::create(),
            )
            .map_err(|e| anyhow!("optimising the lowered module: {e}"))?;
    }
    machine
        .write_to_file(module, FileType::Object, path)
        .map_err(|e| anyhow!("writing {}: {e}", path.display()))
}

/// Moves `llvm.global_ctors` into `.init_array.<priority>` sections.
///
/// A target machine made through LLVM's C API emits constructors into `.ctors` (its
/// `UseInitArray` option is off and the C API cannot set it). GNU ld folds `.ctors` into
/// `.init_array`; lld, which rustc links with, does not, and the registration would never
/// run. Explicit `.init_array.NNNNN` entries, kept by `llvm.used`, run in priority order under
/// both.
fn ctors_to_init_array(module: &Module<'_>) {
    use inkwell::module::Linkage;
    use inkwell::values::{AsValueRef, BasicValueEnum};

    let Some(ctors) = module.get_global("llvm.global_ctors") else { return };
    let ptr = module.get_context().ptr_type(Default::default());
    let mut entries = Vec::new();
    for element in appending::elements(module, "llvm.global_ctors") {
        let element = element.as_value_ref();
        // SAFETY: each element is a `{ i32, ptr, ptr }` constant.
        let (priority, function) = unsafe {
            (
                inkwell::llvm_sys::core::LLVMGetAggregateElement(element, 0),
                inkwell::llvm_sys::core::LLVMGetAggregateElement(element, 1),
            )
        };
        // SAFETY: reading the constant integer operand.
        let priority = unsafe { inkwell::llvm_sys::core::LLVMConstIntGetZExtValue(priority) };
        entries.push((priority, function));
    }
    // SAFETY: `llvm.global_ctors` is only referenced by name.
    unsafe { ctors.delete() };
    let mut used = Vec::new();
    for (n, (priority, function)) in entries.into_iter().enumerate() {
        let slot = module.add_global(ptr, None, &format!(".init_array.entry.{n}"));
        // SAFETY: `function` is a constant function pointer of this module.
        let function = unsafe { BasicValueEnum::new(function) };
        slot.set_initializer(&function);
        slot.set_constant(true);
        slot.set_linkage(Linkage::Internal);
        slot.set_section(Some(&format!(".init_array.{priority:05}")));
        slot.set_alignment(8);
        used.push(slot.as_pointer_value());
    }
    appending::append_used(module, "llvm.used", &used);
}
