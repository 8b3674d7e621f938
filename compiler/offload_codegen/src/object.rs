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
    own_sections(module);
    machine
        .write_to_file(module, FileType::Object, path)
        .map_err(|e| anyhow!("writing {}: {e}", path.display()))
}

/// Puts each function and variable defined here in a section of its own (`.text.<name>`,
/// `.rodata.<name>`, `.data.rel.ro.<name>`, `.data.<name>`, `.bss.<name>`), as rustc's own objects have them
/// (LLVM's C API cannot ask the target machine for it), so that the link's `--gc-sections`
/// drops what nothing uses: every crate's public functions stay global in a unit, and without
/// it they all reached the program (cudarc's bindings of the driver, some 1,700 functions with
/// their lazy loaders, grew saxpy-bench's code from 0.58 to 1.07 MB; with this, 0.50 MB). The
/// names are those LLVM's own function and data sections give. Variables in sections of their
/// own already (the offload entries, `llvm.*`), thread-local ones and those in a COMDAT are
/// left as they are; jump tables stay in the shared `.rodata` (LLVM splits them only when the
/// target machine asks for function sections), keeping the functions they reach.
fn own_sections(module: &Module<'_>) {
    use inkwell::values::AsValueRef;

    for function in module.get_functions() {
        let defined = function.count_basic_blocks() > 0;
        if defined && function.get_section().is_none() {
            let name = function.get_name().to_string_lossy().into_owned();
            function.set_section(Some(&format!(".text.{name}")));
        }
    }
    for global in module.get_globals() {
        let name = global.get_name().to_string_lossy().into_owned();
        let Some(init) = global.get_initializer() else { continue };
        if global.get_section().is_some()
            || global.is_thread_local()
            || global.get_comdat().is_some()
            || name.starts_with("llvm.")
        {
            continue;
        }
        let init = init.as_value_ref();
        // SAFETY: two questions about a constant: whether it is all zeros, and whether it is
        // plain data (bytes, numbers: no address to relocate).
        let (zero, plain) = unsafe {
            (
                inkwell::llvm_sys::core::LLVMIsNull(init) != 0,
                !inkwell::llvm_sys::core::LLVMIsAConstantDataSequential(init).is_null(),
            )
        };
        let kind = match (global.is_constant(), zero, plain) {
            (true, _, true) => "rodata",
            // Read-only after relocation: a constant that may hold addresses, under PIC.
            (true, _, false) => "data.rel.ro",
            (false, true, _) => "bss",
            (false, false, _) => "data",
        };
        global.set_section(Some(&format!(".{kind}.{name}")));
    }
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

#[cfg(test)]
mod tests {
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// The names of an object file's sections.
    fn sections(bytes: &[u8]) -> Vec<String> {
        use object::{Object as _, ObjectSection as _};
        let file = object::File::parse(bytes).unwrap();
        file.sections().map(|s| s.name().unwrap().to_owned()).collect()
    }

    #[test]
    fn each_definition_gets_a_section_of_its_own_that_the_link_can_drop() {
        let ir = r#"
            @plain = constant [4 x i8] c"abcd"
            @table = constant ptr @used
            @zeros = global [8 x i32] zeroinitializer
            @counter = global i32 7
            @tls = thread_local global i32 0
            @entry = constant i32 1, section "llvm_offload_entries"
            define void @used() { ret void }
            define void @unused() { ret void }
        "#;
        let cx = Context::create();
        let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "sections.ll");
        let module = cx.create_module_from_ir(buffer).unwrap();
        module.set_triple(&inkwell::targets::TargetTriple::create("x86_64-unknown-linux-gnu"));
        let path = std::env::temp_dir().join(format!("own-sections-{}.o", std::process::id()));
        super::write_object(&module, 0, &path).unwrap();
        let names = sections(&std::fs::read(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
        for name in [
            ".text.used",
            ".text.unused",
            ".rodata.plain",
            ".data.rel.ro.table",
            ".bss.zeros",
            ".data.counter",
            ".tbss",
            "llvm_offload_entries",
        ] {
            assert!(names.iter().any(|n| n == name), "no section {name} in {names:?}");
        }
        for name in [".tbss.tls", ".bss.tls", ".rodata.entry", ".data.rel.ro.entry"] {
            assert!(!names.iter().any(|n| n == name), "a section {name} in {names:?}");
        }
    }
}
