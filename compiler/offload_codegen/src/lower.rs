//! Rewriting the marker calls: preloads and releases into mapper calls, launches into
//! `begin_mapper -> __tgt_target_kernel -> end_mapper`.

use std::collections::HashMap;

use anyhow::{Context as _, Result, anyhow};
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::values::BasicValue;
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FunctionValue, GlobalValue, InstructionValue, IntValue,
    PointerValue,
};
use inkwell::{AddressSpace, GlobalVisibility};

use crate::abi::{KERNEL_ARGS_VERSION, kernel_args};
use crate::maptype::{self, SlotMapTypes};
use crate::markers::{LaunchCall, MapCall, Slot};
use crate::runtime::{Runtime, make_private_constant};

/// The three pointer arrays every mapper and kernel call takes.
struct ArgArrays<'ctx> {
    base_ptrs: PointerValue<'ctx>,
    ptrs: PointerValue<'ctx>,
    sizes: PointerValue<'ctx>,
}

/// One entry of the argument arrays.
struct ArgEntry<'ctx> {
    base: BasicValueEnum<'ctx>,
    /// `None` for a literal: its `ArgPtrs` slot stays null.
    ptr: Option<BasicValueEnum<'ctx>>,
    size: IntValue<'ctx>,
}

/// Name prefix of a region id that a unit and the glue share.
pub(crate) const SHARED_REGION_ID: &str = "__offload_region_id.";

/// Where the lowering puts the `.<kernel>.region_id` of a launched kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RegionIds {
    /// Defined in the module, internal: the module is the whole program.
    Internal,
    /// Declared, hidden: the module is one unit, and the glue defines them.
    Declared,
    /// Defined, hidden, for the units that declare them: the module is the glue.
    Exported,
}

pub(crate) struct Lowering<'a, 'ctx> {
    pub(crate) cx: &'ctx Context,
    pub(crate) module: &'a Module<'ctx>,
    pub(crate) rt: &'a Runtime<'ctx>,
    builder: Builder<'ctx>,
    pub(crate) region_ids: RegionIds,
    /// `.<kernel>.region_id` of every launched kernel, in first-launch order.
    pub(crate) kernels: Vec<(String, GlobalValue<'ctx>)>,
    /// Map-type tables by content, so identical launches share them.
    tables: HashMap<(String, Vec<i64>), GlobalValue<'ctx>>,
    /// Preload/release sites seen per function, for unique names.
    sites: HashMap<String, usize>,
}

impl<'a, 'ctx> Lowering<'a, 'ctx> {
    pub(crate) fn new(
        cx: &'ctx Context,
        module: &'a Module<'ctx>,
        rt: &'a Runtime<'ctx>,
        region_ids: RegionIds,
    ) -> Self {
        Lowering {
            cx,
            module,
            rt,
            builder: cx.create_builder(),
            region_ids,
            kernels: Vec::new(),
            tables: HashMap::new(),
            sites: HashMap::new(),
        }
    }

    /// `__rust_offload_preload(device, ptr, size, kind)` becomes
    /// ```llvm
    /// store ptr %p, ptr %.offload_baseptrs
    /// store ptr %p, ptr %.offload_ptrs
    /// call void @__tgt_target_data_begin_mapper(ptr @.offload.loc, i64 %device, i32 1,
    ///     ptr %.offload_baseptrs, ptr %.offload_ptrs, ptr @.offload_sizes.<sym>,
    ///     ptr @.offload_maptypes.<sym>.begin, ptr null, ptr null)
    /// ```
    pub(crate) fn preload(&mut self, m: &MapCall<'ctx>) -> Result<()> {
        let ty = maptype::preload_begin(m.kind)
            .ok_or_else(|| anyhow!("unknown preload kind {}", m.kind))?;
        self.mapper(m, "preload", "begin", ty, self.rt.begin_mapper)
    }

    /// `__rust_offload_release(device, ptr, size, kind)` becomes the end ("return") mapper:
    /// map type FROM for a `PreloadMut`, a plain release for a `Preload`.
    pub(crate) fn release(&mut self, m: &MapCall<'ctx>) -> Result<()> {
        let ty = maptype::release_end(m.kind)
            .ok_or_else(|| anyhow!("unknown release kind {}", m.kind))?;
        self.mapper(m, "release", "end", ty, self.rt.end_mapper)
    }

    /// `__rust_offload_update(device, ptr, size, direction)` becomes
    /// `__tgt_target_data_update_mapper` with FROM (sync) or TO (update): a copy between the
    /// host data and its device copy, the mapping and its reference count unchanged.
    pub(crate) fn update(&mut self, m: &MapCall<'ctx>) -> Result<()> {
        let ty = maptype::update(m.kind)
            .ok_or_else(|| anyhow!("unknown update direction {}", m.kind))?;
        let phase = if ty == crate::abi::map_type::FROM { "from" } else { "to" };
        self.mapper(m, "update", phase, ty, self.rt.update_mapper)
    }

    fn mapper(
        &mut self,
        m: &MapCall<'ctx>,
        what: &str,
        phase: &str,
        map_type: i64,
        mapper: FunctionValue<'ctx>,
    ) -> Result<()> {
        let sym = self.site_symbol(m.function, what);
        // 1. the argument arrays, allocated in the entry block and filled at the call
        let entry = ArgEntry { base: m.ptr, ptr: Some(m.ptr), size: m.size };
        let arrays = self.arg_arrays(m.function, m.call, &sym, &[entry])?;
        // 2. the map type
        let types = self.table(&sym, phase, &[map_type]);
        // 3. the mapper call, in place of the marker
        self.builder.position_before(&m.call);
        self.call_mapper(mapper, m.device, 1, &arrays, types)?;
        m.call.erase_from_basic_block();
        Ok(())
    }

    /// A launch marker becomes
    /// ```llvm
    /// ; stores of every slot into %.offload_baseptrs / %.offload_ptrs (/ %.offload_sizes)
    /// call void @__tgt_target_data_begin_mapper(..., ptr @.offload_maptypes.<k>.begin, ...) ; if any slot is mapped
    /// ; stores of the fields of %kernel_args (version 3)
    /// %rc = call i32 @__tgt_target_kernel(ptr @.offload.loc, i64 %device, i32 %grid, i32 %block,
    ///     ptr @.<k>.region_id, ptr %kernel_args)
    /// call void @__tgt_target_data_end_mapper(..., ptr @.offload_maptypes.<k>.end, ...)     ; if any slot is mapped
    /// ```
    /// and the marker's result is `%rc`.
    pub(crate) fn launch(&mut self, l: &LaunchCall<'ctx>) -> Result<()> {
        let splits = l
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| {
                maptype::launch_slot(s.kind)
                    .ok_or_else(|| anyhow!("slot {i} has unknown argument kind {}", s.kind))
            })
            .collect::<Result<Vec<SlotMapTypes>>>()?;
        let kinds: Vec<i64> = l.slots.iter().map(|s| s.kind).collect();
        let n = l.slots.len() as u64;
        let i32t = self.cx.i32_type();

        // 1. the argument arrays
        let entries: Vec<ArgEntry<'ctx>> = l.slots.iter().map(|s| self.slot_entry(s)).collect();
        let arrays = self.arg_arrays(l.function, l.call, &l.kernel, &entries)?;
        // 2. the map types of the three phases, shared by launches that pass the same kinds
        let kernel_types =
            self.table(&l.kernel, "kernel", &splits.iter().map(|s| s.kernel).collect::<Vec<_>>());
        let mapped = maptype::launch_needs_mappers(&kinds);
        let (begin_types, end_types) = if mapped {
            (
                Some(self.table(
                    &l.kernel,
                    "begin",
                    &splits.iter().map(|s| s.begin).collect::<Vec<_>>(),
                )),
                Some(self.table(
                    &l.kernel,
                    "end",
                    &splits.iter().map(|s| s.end).collect::<Vec<_>>(),
                )),
            )
        } else {
            (None, None)
        };
        let region_id = self.region_id(&l.kernel);
        let kargs = self.entry_alloca(l.function, self.rt.kernel_args_ty.into(), "kernel_args")?;

        // 3. copy-in of the slots that are mapped around this launch
        self.builder.position_before(&l.call);
        if let Some(types) = begin_types {
            self.call_mapper(self.rt.begin_mapper, l.device, n, &arrays, types)?;
        }
        // 4. the kernel arguments, version 3
        let ptr_ty = self.cx.ptr_type(AddressSpace::default());
        let i64t = self.cx.i64_type();
        let fields: [(u32, BasicValueEnum<'ctx>); 11] = [
            (kernel_args::VERSION, i32t.const_int(KERNEL_ARGS_VERSION as u64, false).into()),
            (kernel_args::NUM_ARGS, i32t.const_int(n, false).into()),
            (kernel_args::BASE_PTRS, arrays.base_ptrs.into()),
            (kernel_args::PTRS, arrays.ptrs.into()),
            (kernel_args::SIZES, arrays.sizes.into()),
            (kernel_args::MAP_TYPES, kernel_types.as_pointer_value().into()),
            (kernel_args::NAMES, ptr_ty.const_null().into()),
            (kernel_args::MAPPERS, ptr_ty.const_null().into()),
            (kernel_args::TRIPCOUNT, i64t.const_zero().into()),
            (kernel_args::FLAGS, i64t.const_zero().into()),
            (kernel_args::DYN_CGROUP_MEM, i32t.const_zero().into()),
        ];
        for (index, value) in fields {
            let at = self.builder.build_struct_gep(self.rt.kernel_args_ty, kargs, index, "")?;
            self.builder.build_store(at, value)?;
        }
        for (index, first) in
            [(kernel_args::NUM_TEAMS, l.grid), (kernel_args::THREAD_LIMIT, l.block)]
        {
            let one = i32t.const_int(1, false);
            let value = i32t.const_array(&[one, one, one]);
            let value = self.builder.build_insert_value(value, first, 0, "")?;
            let at = self.builder.build_struct_gep(self.rt.kernel_args_ty, kargs, index, "")?;
            self.builder.build_store(at, value.into_array_value())?;
        }
        // 5. the launch
        let rc = self.builder.build_call(
            self.rt.target_kernel,
            &[
                self.rt.loc.as_pointer_value().into(),
                l.device.into(),
                l.grid.into(),
                l.block.into(),
                region_id.as_pointer_value().into(),
                kargs.into(),
            ],
            "",
        )?;
        // 6. copy-out and release of the mapped slots
        if let Some(types) = end_types {
            self.call_mapper(self.rt.end_mapper, l.device, n, &arrays, types)?;
        }
        let rc = rc.try_as_basic_value().basic().context("__tgt_target_kernel returns i32")?;
        let rc = rc.as_instruction_value().context("the kernel call is an instruction")?;
        l.call.replace_all_uses_with(&rc);
        l.call.erase_from_basic_block();
        Ok(())
    }

    fn slot_entry(&self, s: &Slot<'ctx>) -> ArgEntry<'ctx> {
        let literal = s.kind == offload_abi::intrinsics::arg_kind::LITERAL;
        ArgEntry { base: s.value, ptr: (!literal).then_some(s.value), size: s.size }
    }

    /// `<function>.<what>.<n>`: the symbol naming one preload or release site's tables.
    fn site_symbol(&mut self, function: FunctionValue<'ctx>, what: &str) -> String {
        let name = function.get_name().to_string_lossy().into_owned();
        let n = self.sites.entry(format!("{name}.{what}")).or_default();
        *n += 1;
        format!("{name}.{what}.{}", *n - 1)
    }

    /// `.offload_maptypes.<sym>.<phase>`: a constant `[n x i64]`, shared by identical uses.
    fn table(&mut self, sym: &str, phase: &str, types: &[i64]) -> GlobalValue<'ctx> {
        let key = (format!("{sym}.{phase}"), types.to_vec());
        if let Some(g) = self.tables.get(&key) {
            return *g;
        }
        let name = format!(".offload_maptypes.{sym}.{phase}");
        let g = self.i64_table(&name, types);
        self.tables.insert(key, g);
        g
    }

    fn i64_table(&self, name: &str, values: &[i64]) -> GlobalValue<'ctx> {
        let i64t = self.cx.i64_type();
        let init = i64t.const_array(
            &values.iter().map(|&v| i64t.const_int(v as u64, true)).collect::<Vec<_>>(),
        );
        let g = self.module.add_global(init.get_type(), None, name);
        make_private_constant(g, &init);
        g
    }

    /// `.<kernel>.region_id`: the unique host byte that names the kernel to the runtime. Shared
    /// between a unit and the glue, it is `__offload_region_id.<kernel>`: a symbol of the object
    /// file, whose name must not start with `.L` (an assembler-local label on ELF, as
    /// `.Lerp.region_id` would be).
    pub(crate) fn region_id(&mut self, kernel: &str) -> GlobalValue<'ctx> {
        if let Some((_, g)) = self.kernels.iter().find(|(k, _)| k == kernel) {
            return *g;
        }
        let i8t = self.cx.i8_type();
        let shared = self.region_ids != RegionIds::Internal;
        let name = if shared {
            format!("{SHARED_REGION_ID}{kernel}")
        } else {
            format!(".{kernel}.region_id")
        };
        let g = self.module.add_global(i8t, None, &name);
        g.set_constant(true);
        if self.region_ids != RegionIds::Declared {
            g.set_initializer(&i8t.const_zero());
        }
        if shared {
            g.set_linkage(Linkage::External);
            g.set_visibility(GlobalVisibility::Hidden);
        } else {
            g.set_linkage(Linkage::Internal);
        }
        self.kernels.push((kernel.to_owned(), g));
        g
    }

    /// Allocates `%.offload_baseptrs`, `%.offload_ptrs` (and `%.offload_sizes` when a size is
    /// only known at run time) in the entry block, and fills them before `at`. Constant sizes
    /// go to a `.offload_sizes.<sym>` global instead.
    fn arg_arrays(
        &mut self,
        function: FunctionValue<'ctx>,
        at: InstructionValue<'ctx>,
        sym: &str,
        entries: &[ArgEntry<'ctx>],
    ) -> Result<ArgArrays<'ctx>> {
        let ptr_ty = self.cx.ptr_type(AddressSpace::default());
        let i64t = self.cx.i64_type();
        let n = entries.len() as u32;
        let base_ptrs =
            self.entry_alloca(function, ptr_ty.array_type(n).into(), ".offload_baseptrs")?;
        let ptrs = self.entry_alloca(function, ptr_ty.array_type(n).into(), ".offload_ptrs")?;
        let constant_sizes: Option<Vec<i64>> =
            entries.iter().map(|e| e.size.get_sign_extended_constant()).collect();
        let sizes = match &constant_sizes {
            Some(sizes) => self.sized_table(sym, sizes).as_pointer_value(),
            None => self.entry_alloca(function, i64t.array_type(n).into(), ".offload_sizes")?,
        };
        self.builder.position_before(&at);
        for (i, e) in entries.iter().enumerate() {
            let index =
                [self.cx.i32_type().const_zero(), self.cx.i32_type().const_int(i as u64, false)];
            let ptr_value: BasicValueEnum<'ctx> =
                e.ptr.unwrap_or_else(|| ptr_ty.const_null().into());
            let base = self.as_ptr(e.base)?;
            let ptr = self.as_ptr(ptr_value)?;
            // SAFETY (of the GEPs): `i` < n, inside the arrays allocated above.
            let b = unsafe {
                self.builder.build_in_bounds_gep(ptr_ty.array_type(n), base_ptrs, &index, "")
            }?;
            self.builder.build_store(b, base)?;
            let p = unsafe {
                self.builder.build_in_bounds_gep(ptr_ty.array_type(n), ptrs, &index, "")
            }?;
            self.builder.build_store(p, ptr)?;
            if constant_sizes.is_none() {
                let s = unsafe {
                    self.builder.build_in_bounds_gep(i64t.array_type(n), sizes, &index, "")
                }?;
                self.builder.build_store(s, e.size)?;
            }
        }
        Ok(ArgArrays { base_ptrs, ptrs, sizes })
    }

    /// `.offload_sizes.<sym>`, shared by identical uses.
    fn sized_table(&mut self, sym: &str, sizes: &[i64]) -> GlobalValue<'ctx> {
        let key = (format!("{sym}.sizes"), sizes.to_vec());
        if let Some(g) = self.tables.get(&key) {
            return *g;
        }
        let g = self.i64_table(&format!(".offload_sizes.{sym}"), sizes);
        self.tables.insert(key, g);
        g
    }

    fn as_ptr(&self, v: BasicValueEnum<'ctx>) -> Result<PointerValue<'ctx>> {
        Ok(match v {
            BasicValueEnum::PointerValue(p) => p,
            BasicValueEnum::IntValue(i) => {
                self.builder.build_int_to_ptr(i, self.cx.ptr_type(AddressSpace::default()), "")?
            }
            other => {
                anyhow::bail!("an argument slot must be a pointer or an integer, found {other}")
            }
        })
    }

    /// An alloca at the top of the entry block, so loops and branches never grow the stack.
    fn entry_alloca(
        &self,
        function: FunctionValue<'ctx>,
        ty: inkwell::types::BasicTypeEnum<'ctx>,
        name: &str,
    ) -> Result<PointerValue<'ctx>> {
        let entry =
            function.get_first_basic_block().context("a function with a marker call has a body")?;
        let b = self.cx.create_builder();
        match entry.get_first_instruction() {
            Some(first) => b.position_before(&first),
            None => b.position_at_end(entry),
        }
        Ok(b.build_alloca(ty, name)?)
    }

    fn call_mapper(
        &self,
        mapper: FunctionValue<'ctx>,
        device: IntValue<'ctx>,
        n: u64,
        arrays: &ArgArrays<'ctx>,
        types: GlobalValue<'ctx>,
    ) -> Result<()> {
        let null = self.cx.ptr_type(AddressSpace::default()).const_null();
        let args: [BasicMetadataValueEnum<'ctx>; 9] = [
            self.rt.loc.as_pointer_value().into(),
            device.into(),
            self.cx.i32_type().const_int(n, false).into(),
            arrays.base_ptrs.into(),
            arrays.ptrs.into(),
            arrays.sizes.into(),
            types.as_pointer_value().into(),
            null.into(),
            null.into(),
        ];
        self.builder.build_call(mapper, &args, "")?;
        Ok(())
    }
}
