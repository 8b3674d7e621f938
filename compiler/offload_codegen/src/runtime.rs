//! Module-wide declarations, built once per lowering: the runtime's entry points, the ABI
//! struct types and the default source location.

use inkwell::AddressSpace;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::StructType;
use inkwell::values::{BasicValue, FunctionValue, GlobalValue};

use crate::abi::{BinDesc, DeviceImage, Ident, KernelArgs, OffloadEntry, RuntimeAbi};

/// Source location string of every emitted runtime call (`;file;function;line;column;;`).
const UNKNOWN_LOCATION: &str = ";unknown;unknown;0;0;;";

pub(crate) struct Runtime<'ctx> {
    /// `void __tgt_target_data_begin_mapper(ident_t*, i64 device, i32 n, void** base, void** ptrs,
    /// i64* sizes, i64* types, void** names, void** mappers)`
    pub(crate) begin_mapper: FunctionValue<'ctx>,
    /// `void __tgt_target_data_end_mapper(...)`, same operands.
    pub(crate) end_mapper: FunctionValue<'ctx>,
    /// `void __tgt_target_data_update_mapper(...)`, same operands.
    pub(crate) update_mapper: FunctionValue<'ctx>,
    /// `i32 __tgt_target_kernel(ident_t*, i64 device, i32 teams, i32 threads, void* region_id,
    /// __tgt_kernel_arguments*)`
    pub(crate) target_kernel: FunctionValue<'ctx>,
    /// `void __tgt_register_lib(__tgt_bin_desc*)`
    pub(crate) register_lib: FunctionValue<'ctx>,
    /// `void __tgt_unregister_lib(__tgt_bin_desc*)`
    pub(crate) unregister_lib: FunctionValue<'ctx>,
    /// `int atexit(void (*)(void))`
    pub(crate) atexit: FunctionValue<'ctx>,
    pub(crate) kernel_args_ty: StructType<'ctx>,
    pub(crate) entry_ty: StructType<'ctx>,
    pub(crate) image_ty: StructType<'ctx>,
    pub(crate) desc_ty: StructType<'ctx>,
    /// The `ident_t` passed as the location of every call.
    pub(crate) loc: GlobalValue<'ctx>,
}

impl<'ctx> Runtime<'ctx> {
    pub(crate) fn declare(cx: &'ctx Context, module: &Module<'ctx>, abi: RuntimeAbi) -> Self {
        let ptr = cx.ptr_type(AddressSpace::default());
        let (void, i32t, i64t) = (cx.void_type(), cx.i32_type(), cx.i64_type());
        let mapper_ty = void.fn_type(
            &[
                ptr.into(),
                i64t.into(),
                i32t.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
            ],
            false,
        );
        let declare = |name: &str, ty| {
            module.get_function(name).unwrap_or_else(|| module.add_function(name, ty, None))
        };
        let ident_ty = Ident::declare(cx);
        let psource = cx.const_string(UNKNOWN_LOCATION.as_bytes(), true);
        let psource_global = module.add_global(psource.get_type(), None, ".offload.loc.str");
        make_private_constant(psource_global, &psource);
        let loc = module.add_global(ident_ty, None, ".offload.loc");
        make_private_constant(
            loc,
            &Ident::init(cx, ident_ty, psource_global, UNKNOWN_LOCATION.len()),
        );
        Runtime {
            begin_mapper: declare("__tgt_target_data_begin_mapper", mapper_ty),
            end_mapper: declare("__tgt_target_data_end_mapper", mapper_ty),
            update_mapper: declare("__tgt_target_data_update_mapper", mapper_ty),
            target_kernel: declare(
                "__tgt_target_kernel",
                i32t.fn_type(
                    &[ptr.into(), i64t.into(), i32t.into(), i32t.into(), ptr.into(), ptr.into()],
                    false,
                ),
            ),
            register_lib: declare("__tgt_register_lib", void.fn_type(&[ptr.into()], false)),
            unregister_lib: declare("__tgt_unregister_lib", void.fn_type(&[ptr.into()], false)),
            atexit: declare("atexit", i32t.fn_type(&[ptr.into()], false)),
            kernel_args_ty: KernelArgs::declare(cx),
            entry_ty: OffloadEntry::declare(cx, abi),
            image_ty: DeviceImage::declare(cx),
            desc_ty: BinDesc::declare(cx),
            loc,
        }
    }
}

impl Runtime<'_> {
    /// Deletes the declarations that nothing calls: a unit keeps only what it uses.
    pub(crate) fn remove_unused(&self) {
        let functions = [
            self.begin_mapper,
            self.end_mapper,
            self.update_mapper,
            self.target_kernel,
            self.register_lib,
            self.unregister_lib,
            self.atexit,
        ];
        functions.into_iter().for_each(delete_if_unused);
    }
}

/// Deletes `f` if it is a declaration that nothing uses.
pub(crate) fn delete_if_unused(f: FunctionValue<'_>) {
    if f.count_basic_blocks() == 0
        && f.as_global_value().as_pointer_value().get_first_use().is_none()
    {
        // SAFETY: a declaration without uses.
        unsafe { f.delete() };
    }
}

/// `private unnamed_addr constant`, the linkage of every table the lowering emits.
pub(crate) fn make_private_constant<'ctx>(
    global: GlobalValue<'ctx>,
    init: &dyn inkwell::values::BasicValue<'ctx>,
) {
    global.set_initializer(init);
    global.set_constant(true);
    global.set_linkage(Linkage::Private);
    global.set_unnamed_addr(true);
}
