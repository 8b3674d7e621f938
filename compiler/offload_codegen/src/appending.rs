//! LLVM's appending globals (`llvm.used`, `llvm.global_ctors`): read, and replaced with more.

use inkwell::AddressSpace;
use inkwell::llvm_sys::core::LLVMGetAggregateElement;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, BasicValueEnum, PointerValue};

/// The elements of the array global `name`, or none.
pub(crate) fn elements<'ctx>(module: &Module<'ctx>, name: &str) -> Vec<BasicValueEnum<'ctx>> {
    let Some(BasicValueEnum::ArrayValue(array)) =
        module.get_global(name).and_then(|g| g.get_initializer())
    else {
        return Vec::new();
    };
    (0..array.get_type().len())
        // SAFETY: `i` is below the array's length, and the element is a constant of the module.
        .map(|i| unsafe { BasicValueEnum::new(LLVMGetAggregateElement(array.as_value_ref(), i)) })
        .collect()
}

/// Replaces (or creates) the appending global `name` with `init`.
pub(crate) fn replace<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    init: BasicValueEnum<'ctx>,
    section: Option<&str>,
) {
    if let Some(old) = module.get_global(name) {
        // SAFETY: appending globals are only referenced by name, never by use.
        unsafe { old.delete() };
    }
    let g = module.add_global(init.get_type(), None, name);
    g.set_initializer(&init);
    g.set_linkage(Linkage::Appending);
    if let Some(s) = section {
        g.set_section(Some(s));
    }
}

/// Appends pointers to `@llvm.used` or `@llvm.compiler.used`.
pub(crate) fn append_used<'ctx>(module: &Module<'ctx>, name: &str, values: &[PointerValue<'ctx>]) {
    if values.is_empty() {
        return;
    }
    let ptr_ty = module.get_context().ptr_type(AddressSpace::default());
    let mut all: Vec<PointerValue<'ctx>> = elements(module, name)
        .into_iter()
        .filter_map(|v| match v {
            BasicValueEnum::PointerValue(p) => Some(p),
            _ => None,
        })
        .collect();
    all.extend_from_slice(values);
    replace(module, name, ptr_ty.const_array(&all).into(), Some("llvm.metadata"));
}

/// Appends `{ i32 priority, ptr function, ptr null }` to `@llvm.global_ctors`, keeping what is
/// there.
pub(crate) fn append_ctor<'ctx>(
    module: &Module<'ctx>,
    priority: u64,
    function: PointerValue<'ctx>,
) {
    let cx = module.get_context();
    let ptr_ty = cx.ptr_type(AddressSpace::default());
    let ctor_ty = cx.struct_type(&[cx.i32_type().into(), ptr_ty.into(), ptr_ty.into()], false);
    let ours = ctor_ty.const_named_struct(&[
        cx.i32_type().const_int(priority, false).into(),
        function.into(),
        ptr_ty.const_null().into(),
    ]);
    let mut all: Vec<inkwell::values::StructValue<'ctx>> = elements(module, "llvm.global_ctors")
        .into_iter()
        .filter_map(|v| match v {
            BasicValueEnum::StructValue(s) => Some(s),
            _ => None,
        })
        .collect();
    all.push(ours);
    replace(module, "llvm.global_ctors", ctor_ty.const_array(&all).into(), None);
}

/// Takes `global` out of `@llvm.used` and `@llvm.compiler.used` (each removed once empty).
pub(crate) fn remove_from_used(module: &Module<'_>, global: inkwell::values::GlobalValue<'_>) {
    let target = global.as_pointer_value().as_value_ref();
    for name in ["llvm.used", "llvm.compiler.used"] {
        let Some(old) = module.get_global(name) else { continue };
        let all = elements(module, name);
        let kept: Vec<PointerValue<'_>> = all
            .iter()
            .filter_map(|v| match v {
                BasicValueEnum::PointerValue(p) if p.as_value_ref() != target => Some(*p),
                _ => None,
            })
            .collect();
        if kept.len() == all.len() {
            continue;
        }
        if kept.is_empty() {
            // SAFETY: appending globals are only referenced by name, never by use.
            unsafe { old.delete() };
        } else {
            let ptr_ty = module.get_context().ptr_type(AddressSpace::default());
            replace(module, name, ptr_ty.const_array(&kept).into(), Some("llvm.metadata"));
        }
    }
}
