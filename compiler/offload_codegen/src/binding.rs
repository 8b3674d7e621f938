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
//! The table has pages of its own (aligned to 4096 bytes, its slots a multiple of 512): once it
//! is filled, the loader makes them read-only, as full RELRO makes the dynamic loader's table,
//! so that a stray write cannot redirect the program's runtime calls.
//!
//! ```llvm
//! @.offload_rt.names = private unnamed_addr constant [N x ptr] [ptr @.offload_rt.name.0, ...]
//! @.offload_rt.table = internal global [512 x ptr] zeroinitializer, align 4096
//! define internal i32 @omp_get_num_devices.offload_rt() {
//!   %f = load ptr, ptr getelementptr ([512 x ptr], ptr @.offload_rt.table, i32 0, i32 K)
//!   %r = tail call i32 %f()
//!   ret i32 %r
//! }
//! define internal void @.offload_rt.load() {
//!   call void @__offload_load_runtime(ptr @.offload_rt.names, ptr @.offload_rt.table, i64 N, i64 4096)
//!   ret void
//! }
//! @llvm.global_ctors = appending global [...] [{ i32 100, ptr @.offload_rt.load, ptr null }, ...]
//! ```

use anyhow::{Result, anyhow, bail};
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use inkwell::values::{BasicMetadataValueEnum, BasicValue, FunctionValue};
use inkwell::{AddressSpace, GlobalVisibility};

use crate::appending;
use crate::runtime::make_private_constant;

/// `void(ptr names, ptr table, i64 n, i64 table_bytes)`: the library's loader.
pub(crate) use offload_abi::entry::LOAD_RUNTIME;

/// The table's alignment and the multiple of its size: a page (x86_64's; where pages are larger,
/// the loader leaves the table writable).
const TABLE_PAGE: u32 = 4096;

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
        .filter(|f| f.count_basic_blocks() > 0 && f.count_params() == 4)
    else {
        return Ok(0);
    };
    let declarations = bindable_declarations(module);
    if declarations.is_empty() {
        return Ok(0);
    }
    through_table(module, loader, &declarations, Linkage::Internal)?;
    Ok(declarations.len())
}

/// A runtime function a unit calls, which the glue binds for it.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct RuntimeFunction {
    pub name: String,
    /// Its LLVM function type, as IR text (`void (ptr, i64)`).
    pub ty: String,
    /// Its LLVM calling convention number.
    pub call_conv: u32,
}

/// In a unit: points every call of a runtime function at `<name>.offload_rt`, a hidden symbol the
/// glue defines (through the loader's table, or straight to the runtime where the program holds
/// no loader), and returns the functions.
pub(crate) fn redirect_to_glue(module: &Module<'_>) -> Vec<RuntimeFunction> {
    bindable_declarations(module)
        .into_iter()
        .filter(|f| f.as_global_value().as_pointer_value().get_first_use().is_some())
        .map(|f| {
            let name = f.get_name().to_string_lossy().into_owned();
            let function = RuntimeFunction {
                ty: f.get_type().print_to_string().to_string(),
                call_conv: f.get_call_conventions(),
                name: name.clone(),
            };
            f.as_global_value().set_name(&format!("{name}{TRAMPOLINE_SUFFIX}"));
            f.as_global_value().set_visibility(GlobalVisibility::Hidden);
            function
        })
        .collect()
}

/// In a unit: the functions it defines, visible to other units, under a runtime function's name
/// (`omp_*`, `__tgt_*`, ...). Another unit's calls of them are the program's own, not the
/// runtime's.
pub(crate) fn runtime_named_definitions(module: &Module<'_>) -> Vec<String> {
    module
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .filter(|f| {
            !matches!(f.get_linkage(), Linkage::Internal | Linkage::Private) && is_runtime_name(f)
        })
        .map(|f| f.get_name().to_string_lossy().into_owned())
        .collect()
}

/// In the glue: defines `<name>.offload_rt` for each of the units' `functions`, hidden and
/// external. With the library's `loader` linked in the program, they and the glue's own runtime
/// calls go through its table; without it, each forwards to the runtime function itself, which
/// the dynamic loader binds. A function a unit defines itself (`defined`) is forwarded to, never
/// looked up in the runtime. Returns how many functions the table binds.
pub(crate) fn export_trampolines(
    module: &Module<'_>,
    functions: &[RuntimeFunction],
    loader: bool,
    defined: &[String],
) -> Result<usize> {
    let cx = module.get_context();
    if !functions.is_empty() {
        let text: String = functions
            .iter()
            .map(|f| {
                let (ret, params) = f.ty.split_once(" (").ok_or_else(|| {
                    anyhow!("`{}` is not a function type (of `{}`)", f.ty, f.name)
                })?;
                Ok(format!("declare cc {} {ret} @\"{}\"({params}\n", f.call_conv, f.name))
            })
            .collect::<Result<_>>()?;
        let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), "runtime");
        let declarations = cx
            .create_module_from_ir(buffer)
            .map_err(|e| anyhow!("declaring the units' runtime functions: {e}"))?;
        // Types belong to the context: the declarations are copied over by type (linking the
        // module would drop them, as nothing uses them yet).
        for f in declarations.get_functions() {
            let name = f.get_name().to_string_lossy();
            match module.get_function(&name) {
                Some(existing) if existing.get_type() != f.get_type() => bail!(
                    "`{name}` is called as {} by a unit and as {} by the lowering",
                    f.get_type(),
                    existing.get_type()
                ),
                Some(_) => {}
                None => {
                    module
                        .add_function(&name, f.get_type(), None)
                        .set_call_conventions(f.get_call_conventions());
                }
            }
        }
    }
    let for_units =
        |f: &FunctionValue| functions.iter().any(|u| u.name.as_bytes() == f.get_name().to_bytes());
    let own = |f: &FunctionValue| defined.iter().any(|d| d.as_bytes() == f.get_name().to_bytes());
    let (forwarded, tabled): (Vec<FunctionValue>, Vec<FunctionValue>) =
        bindable_declarations(module)
            .into_iter()
            .filter(|f| {
                for_units(f) || f.as_global_value().as_pointer_value().get_first_use().is_some()
            })
            .partition(|f| !loader || own(f));
    if loader && !tabled.is_empty() {
        let ptr = cx.ptr_type(AddressSpace::default());
        let i64t = cx.i64_type();
        let loader_ty =
            cx.void_type().fn_type(&[ptr.into(), ptr.into(), i64t.into(), i64t.into()], false);
        let loader = module.add_function(LOAD_RUNTIME, loader_ty, None);
        through_table(module, loader, &tabled, Linkage::External)?;
    }
    let b = cx.create_builder();
    for &f in forwarded.iter().filter(|f| for_units(f)) {
        let trampoline = add_trampoline(module, f, Linkage::External);
        b.position_at_end(cx.append_basic_block(trampoline, "entry"));
        let call = b.build_call(f, &forwarded_params(trampoline), "")?;
        return_call(&b, trampoline, call)?;
    }
    Ok(if loader { tabled.len() } else { 0 })
}

/// Suffix of the trampoline that stands for a runtime function.
const TRAMPOLINE_SUFFIX: &str = ".offload_rt";

/// The module's declarations of runtime functions that a trampoline can stand for.
fn bindable_declarations<'ctx>(module: &Module<'ctx>) -> Vec<FunctionValue<'ctx>> {
    module
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
        .filter(is_runtime_name)
        .collect()
}

/// Whether `f` is named as a runtime function is ([`RUNTIME_PREFIXES`]).
fn is_runtime_name(f: &FunctionValue<'_>) -> bool {
    let name = f.get_name().to_bytes();
    RUNTIME_PREFIXES.iter().any(|p| name.starts_with(p.as_bytes()))
}

/// Adds `<name>.offload_rt`, empty, with `declaration`'s type and calling convention: hidden
/// unless internal.
fn add_trampoline<'ctx>(
    module: &Module<'ctx>,
    declaration: FunctionValue<'ctx>,
    linkage: Linkage,
) -> FunctionValue<'ctx> {
    let name = declaration.get_name().to_string_lossy();
    let trampoline = module.add_function(
        &format!("{name}{TRAMPOLINE_SUFFIX}"),
        declaration.get_type(),
        Some(linkage),
    );
    if linkage != Linkage::Internal {
        trampoline.as_global_value().set_visibility(GlobalVisibility::Hidden);
    }
    trampoline.set_call_conventions(declaration.get_call_conventions());
    trampoline
}

/// Ends a trampoline with `call`, which forwards its parameters: a tail call in the calling
/// convention of the trampoline, whose value it returns.
fn return_call<'ctx>(
    b: &inkwell::builder::Builder<'ctx>,
    trampoline: FunctionValue<'ctx>,
    call: inkwell::values::CallSiteValue<'ctx>,
) -> Result<()> {
    call.set_tail_call(true);
    call.set_call_convention(trampoline.get_call_conventions());
    match call.try_as_basic_value().basic() {
        Some(value) => b.build_return(Some(&value))?,
        None => b.build_return(None)?,
    };
    Ok(())
}

/// A trampoline's parameters, as call arguments.
fn forwarded_params<'ctx>(trampoline: FunctionValue<'ctx>) -> Vec<BasicMetadataValueEnum<'ctx>> {
    trampoline.get_param_iter().map(Into::into).collect()
}

/// Defines a trampoline for each of `declarations` that calls through a table which `loader`
/// fills in a constructor, and points the declarations' uses at them.
fn through_table<'ctx>(
    module: &Module<'ctx>,
    loader: FunctionValue<'ctx>,
    declarations: &[FunctionValue<'ctx>],
    linkage: Linkage,
) -> Result<()> {
    let cx = module.get_context();
    let ptr = cx.ptr_type(AddressSpace::default());
    let i32t = cx.i32_type();
    let n = declarations.len();
    let names_ty = ptr.array_type(n as u32);
    // Whole pages: the loader seals them once the table is filled.
    let per_page = TABLE_PAGE / (u64::BITS / 8);
    let slots = (n as u32).div_ceil(per_page) * per_page;
    let table_ty = ptr.array_type(slots);

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
    let names_global = module.add_global(names_ty, None, ".offload_rt.names");
    make_private_constant(names_global, &ptr.const_array(&names));
    let table = module.add_global(table_ty, None, ".offload_rt.table");
    table.set_initializer(&table_ty.const_zero());
    table.set_linkage(Linkage::Internal);
    table.set_alignment(TABLE_PAGE);

    let b = cx.create_builder();
    for (i, &declaration) in declarations.iter().enumerate() {
        let trampoline = add_trampoline(module, declaration, linkage);
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
        let call = b.build_indirect_call(
            declaration.get_type(),
            target,
            &forwarded_params(trampoline),
            "",
        )?;
        return_call(&b, trampoline, call)?;
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
    let bytes = cx.i64_type().const_int(u64::from(slots) * u64::from(u64::BITS / 8), false);
    b.build_call(
        loader,
        &[
            names_global.as_pointer_value().into(),
            table.as_pointer_value().into(),
            count.into(),
            bytes.into(),
        ],
        "",
    )?;
    b.build_return(None)?;
    appending::append_ctor(module, LOAD_PRIORITY, load.as_global_value().as_pointer_value());
    Ok(())
}
