//! Binding the program to the offload runtime through a table the library fills, instead of
//! through the dynamic loader.
//!
//! A program that names libomptarget as a dependency cannot start where it is missing, and the
//! dynamic loader's message does not say which package to install. Where the module holds the
//! library's loader, every call of a runtime function is redirected through a table: each
//! declaration becomes an internal trampoline that calls the table's entry, and a constructor
//! that runs before every other (priority 100, the registration's is 101) hands the names and
//! the table to the loader, which opens the runtime and fills the table with `dlsym` on its
//! handle. Nothing of the runtime is left for the dynamic loader to bind, so it works under
//! `LD_BIND_NOW` and full RELRO, and another OpenMP runtime loaded in the process (libgomp) does
//! not capture the calls.
//!
//! ```llvm
//! @.offload_rt.names = private unnamed_addr constant [N x ptr] [ptr @.offload_rt.name.0, ...]
//! @.offload_rt.table = internal global [N x ptr] zeroinitializer
//! define internal i32 @omp_get_num_devices.offload_rt() {
//!   %f = load ptr, ptr getelementptr ([N x ptr], ptr @.offload_rt.table, i32 0, i32 K)
//!   %r = tail call i32 %f()
//!   ret i32 %r
//! }
//! define internal void @.offload_rt.load() {
//!   call void @__offload_load_runtime(ptr @.offload_rt.names, ptr @.offload_rt.table, i64 N)
//!   ret void
//! }
//! @llvm.global_ctors = appending global [...] [{ i32 100, ptr @.offload_rt.load, ptr null }, ...]
//! ```

use anyhow::Result;
use inkwell::AddressSpace;
use inkwell::module::{Linkage, Module};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue};

use crate::appending;
use crate::runtime::make_private_constant;

/// `void(ptr names, ptr table, i64 n)`: the library's loader.
pub(crate) const LOAD_RUNTIME: &str = "__offload_load_runtime";

/// Name prefixes of the offload runtime's functions: libomptarget's (`__tgt_*`, `llvm_omp_*`,
/// `omp_target_*`) and libomp's (`omp_*`, `__kmpc_*`).
const RUNTIME_PREFIXES: &[&str] = &["__tgt_", "omp_", "llvm_omp_", "__kmpc_"];

/// Priority of the loader's constructor: before the registration's (101).
const LOAD_PRIORITY: u64 = 100;

/// Redirects the module's calls of runtime functions through a table the library's loader
/// fills (see the module's documentation). Returns how many functions it redirected: 0 where
/// the module holds no loader (a program that does not link the offload library, which then
/// links the runtime as an ordinary dependency) or calls no runtime function.
pub fn bind_runtime_through_table(module: &Module<'_>) -> Result<usize> {
    let Some(loader) = module
        .get_function(LOAD_RUNTIME)
        .filter(|f| f.count_basic_blocks() > 0 && f.count_params() == 3)
    else {
        return Ok(0);
    };
    let declarations: Vec<FunctionValue> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() == 0 && !f.get_type().is_var_arg())
        // A trampoline forwards plain values: a parameter passed in memory (`byval`, `sret`,
        // `inalloca`) stays with the dynamic loader.
        .filter(|f| {
            (0..f.count_params()).all(|i| {
                ["byval", "sret", "inalloca", "preallocated"].iter().all(|a| {
                    let kind = inkwell::attributes::Attribute::get_named_enum_kind_id(a);
                    f.get_enum_attribute(inkwell::attributes::AttributeLoc::Param(i), kind)
                        .is_none()
                })
            })
        })
        .filter(|f| {
            let name = f.get_name().to_bytes();
            RUNTIME_PREFIXES.iter().any(|p| name.starts_with(p.as_bytes()))
        })
        .collect();
    if declarations.is_empty() {
        return Ok(0);
    }
    let cx = module.get_context();
    let ptr = cx.ptr_type(AddressSpace::default());
    let i32t = cx.i32_type();
    let n = declarations.len();
    let table_ty = ptr.array_type(n as u32);

    let names: Vec<_> = declarations
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let text = cx.const_string(f.get_name().to_bytes(), true);
            let g = module.add_global(text.get_type(), None, &format!(".offload_rt.name.{i}"));
            make_private_constant(g, &text);
            g.as_pointer_value()
        })
        .collect();
    let names_global = module.add_global(table_ty, None, ".offload_rt.names");
    make_private_constant(names_global, &ptr.const_array(&names));
    let table = module.add_global(table_ty, None, ".offload_rt.table");
    table.set_initializer(&table_ty.const_zero());
    table.set_linkage(Linkage::Internal);

    let b = cx.create_builder();
    for (i, declaration) in declarations.iter().enumerate() {
        let name = declaration.get_name().to_string_lossy().into_owned();
        let fn_ty = declaration.get_type();
        let trampoline =
            module.add_function(&format!("{name}.offload_rt"), fn_ty, Some(Linkage::Internal));
        trampoline.set_call_conventions(declaration.get_call_conventions());
        b.position_at_end(cx.append_basic_block(trampoline, "entry"));
        // SAFETY: the indices are within the table's type.
        let slot = unsafe {
            b.build_in_bounds_gep(
                table_ty,
                table.as_pointer_value(),
                &[i32t.const_zero(), i32t.const_int(i as u64, false)],
                "slot",
            )?
        };
        let target = b.build_load(ptr, slot, "f")?.into_pointer_value();
        let args: Vec<BasicMetadataValueEnum> =
            trampoline.get_param_iter().map(Into::into).collect();
        let call = b.build_indirect_call(fn_ty, target, &args, "")?;
        call.set_tail_call(true);
        call.set_call_convention(declaration.get_call_conventions());
        match call.try_as_basic_value().basic() {
            Some(value) => b.build_return(Some(&value))?,
            None => b.build_return(None)?,
        };
        declaration
            .as_global_value()
            .as_pointer_value()
            .replace_all_uses_with(trampoline.as_global_value().as_pointer_value());
        // SAFETY: a declaration whose uses were all replaced just above.
        unsafe { declaration.delete() };
    }

    let load = module.add_function(
        ".offload_rt.load",
        cx.void_type().fn_type(&[], false),
        Some(Linkage::Internal),
    );
    b.position_at_end(cx.append_basic_block(load, "entry"));
    let count = cx.i64_type().const_int(n as u64, false);
    b.build_call(
        loader,
        &[names_global.as_pointer_value().into(), table.as_pointer_value().into(), count.into()],
        "",
    )?;
    b.build_return(None)?;
    appending::append_ctor(module, LOAD_PRIORITY, load.as_global_value().as_pointer_value());
    Ok(n)
}
