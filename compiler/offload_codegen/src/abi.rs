//! The runtime's ABI: map-type flags and one Rust type per `__tgt_*` structure.
//!
//! The lowering emits the structures of the runtime it links against. Debian's libomptarget 19
//! reads the LLVM 19 offload entry; newer runtimes read the 56-byte entry in the
//! `llvm_offload_entries` section. Both live here, chosen by [`RuntimeAbi`].

use inkwell::context::Context;
use inkwell::types::StructType;
use inkwell::values::{BasicValueEnum, GlobalValue, StructValue};

/// Bits of a map type (`OpenMPOffloadMappingFlags` in LLVM).
pub mod map_type {
    pub const NONE: i64 = 0;
    pub const TO: i64 = 0x1;
    pub const FROM: i64 = 0x2;
    pub const ALWAYS: i64 = 0x4;
    pub const DELETE: i64 = 0x8;
    pub const TARGET_PARAM: i64 = 0x20;
    pub const LITERAL: i64 = 0x100;
    pub const IMPLICIT: i64 = 0x200;
    pub const PRESENT: i64 = 0x1000;
}

/// `__tgt_kernel_arguments::Version` the lowering emits: the runtime then passes a leading
/// `dyn_ptr` slot to every kernel.
pub const KERNEL_ARGS_VERSION: i32 = 3;

/// `ident_t::flags` of a source location made by a compiler (`KMP_IDENT_KMPC`).
const KMP_IDENT_KMPC: i32 = 2;

/// Offload entry kind of OpenMP entries in the newer layout (`OFK_OpenMP`).
const OFFLOAD_KIND_OPENMP: i16 = 1;
/// Version of the newer entry layout.
const OFFLOAD_ENTRY_VERSION: i16 = 1;

/// Which offload entry layout the runtime reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RuntimeAbi {
    /// LLVM 19 (Debian's `libomp5-19`): 32-byte entries in `omp_offloading_entries`.
    #[default]
    Llvm19,
    /// LLVM 20 and later: 56-byte entries in `llvm_offload_entries`.
    Current,
}

impl std::str::FromStr for RuntimeAbi {
    type Err = String;

    /// The names the tools give the layouts: `llvm19` and `current`.
    fn from_str(name: &str) -> Result<Self, String> {
        match name {
            "llvm19" => Ok(RuntimeAbi::Llvm19),
            "current" => Ok(RuntimeAbi::Current),
            _ => Err(format!("unknown runtime ABI `{name}` (llvm19 or current)")),
        }
    }
}

impl RuntimeAbi {
    /// The section the linker gathers entries in (and names `__start_`/`__stop_` after).
    pub fn entries_section(self) -> &'static str {
        match self {
            RuntimeAbi::Llvm19 => "omp_offloading_entries",
            RuntimeAbi::Current => "llvm_offload_entries",
        }
    }
}

/// ```c
/// typedef struct ident_t {
///   int32_t reserved_1, flags, reserved_2, reserved_3;
///   const char *psource;          // ";file;function;line;column;;"
/// } ident_t;                      // 24 bytes
/// ```
pub(crate) struct Ident;

impl Ident {
    pub(crate) fn declare<'ctx>(cx: &'ctx Context) -> StructType<'ctx> {
        let (i32t, ptr) = (cx.i32_type(), cx.ptr_type(Default::default()));
        named_struct(
            cx,
            "struct.ident_t",
            &[i32t.into(), i32t.into(), i32t.into(), i32t.into(), ptr.into()],
        )
    }

    pub(crate) fn init<'ctx>(
        cx: &'ctx Context,
        ty: StructType<'ctx>,
        psource: GlobalValue<'ctx>,
        len: usize,
    ) -> StructValue<'ctx> {
        let i32t = cx.i32_type();
        ty.const_named_struct(&[
            i32t.const_zero().into(),
            i32t.const_int(KMP_IDENT_KMPC as u64, false).into(),
            i32t.const_zero().into(),
            i32t.const_int(len as u64, false).into(),
            psource.as_pointer_value().into(),
        ])
    }
}

/// LLVM 19:
/// ```c
/// struct __tgt_offload_entry {    // 32 bytes
///   void *addr; char *name; size_t size; int32_t flags; int32_t reserved;
/// };
/// ```
/// LLVM 20 and later:
/// ```c
/// struct __tgt_offload_entry {    // 56 bytes
///   uint64_t Reserved; uint16_t Version; uint16_t Kind; uint32_t Flags;
///   void *Address; char *SymbolName; uint64_t Size; uint64_t Data; void *AuxAddr;
/// };
/// ```
pub(crate) struct OffloadEntry;

impl OffloadEntry {
    pub(crate) fn declare<'ctx>(cx: &'ctx Context, abi: RuntimeAbi) -> StructType<'ctx> {
        let (i16t, i32t, i64t, ptr) =
            (cx.i16_type(), cx.i32_type(), cx.i64_type(), cx.ptr_type(Default::default()));
        match abi {
            RuntimeAbi::Llvm19 => named_struct(
                cx,
                "struct.__tgt_offload_entry",
                &[ptr.into(), ptr.into(), i64t.into(), i32t.into(), i32t.into()],
            ),
            RuntimeAbi::Current => named_struct(
                cx,
                "struct.__tgt_offload_entry",
                &[
                    i64t.into(),
                    i16t.into(),
                    i16t.into(),
                    i32t.into(),
                    ptr.into(),
                    ptr.into(),
                    i64t.into(),
                    i64t.into(),
                    ptr.into(),
                ],
            ),
        }
    }

    /// The entry of one kernel: its host region id and its symbol in the device image.
    pub(crate) fn init_kernel<'ctx>(
        cx: &'ctx Context,
        abi: RuntimeAbi,
        ty: StructType<'ctx>,
        region_id: GlobalValue<'ctx>,
        name: GlobalValue<'ctx>,
    ) -> StructValue<'ctx> {
        let (i16t, i32t, i64t, ptr) =
            (cx.i16_type(), cx.i32_type(), cx.i64_type(), cx.ptr_type(Default::default()));
        let (addr, name) = (region_id.as_pointer_value().into(), name.as_pointer_value().into());
        let fields: Vec<BasicValueEnum<'ctx>> = match abi {
            RuntimeAbi::Llvm19 => vec![
                addr,
                name,
                i64t.const_zero().into(),
                i32t.const_zero().into(),
                i32t.const_zero().into(),
            ],
            RuntimeAbi::Current => vec![
                i64t.const_zero().into(),
                i16t.const_int(OFFLOAD_ENTRY_VERSION as u64, false).into(),
                i16t.const_int(OFFLOAD_KIND_OPENMP as u64, false).into(),
                i32t.const_zero().into(),
                addr,
                name,
                i64t.const_zero().into(),
                i64t.const_zero().into(),
                ptr.const_null().into(),
            ],
        };
        ty.const_named_struct(&fields)
    }
}

/// ```c
/// struct __tgt_device_image {     // 32 bytes
///   void *ImageStart; void *ImageEnd;
///   __tgt_offload_entry *EntriesBegin; __tgt_offload_entry *EntriesEnd;
/// };
/// ```
pub(crate) struct DeviceImage;

impl DeviceImage {
    pub(crate) fn declare<'ctx>(cx: &'ctx Context) -> StructType<'ctx> {
        let ptr = cx.ptr_type(Default::default());
        named_struct(
            cx,
            "struct.__tgt_device_image",
            &[ptr.into(), ptr.into(), ptr.into(), ptr.into()],
        )
    }
}

/// ```c
/// struct __tgt_bin_desc {         // 32 bytes
///   int32_t NumDeviceImages; __tgt_device_image *DeviceImages;
///   __tgt_offload_entry *HostEntriesBegin; __tgt_offload_entry *HostEntriesEnd;
/// };
/// ```
pub(crate) struct BinDesc;

impl BinDesc {
    pub(crate) fn declare<'ctx>(cx: &'ctx Context) -> StructType<'ctx> {
        let (i32t, ptr) = (cx.i32_type(), cx.ptr_type(Default::default()));
        named_struct(
            cx,
            "struct.__tgt_bin_desc",
            &[i32t.into(), ptr.into(), ptr.into(), ptr.into()],
        )
    }
}

/// Version 3:
/// ```c
/// struct __tgt_kernel_arguments { // 104 bytes
///   uint32_t Version; uint32_t NumArgs;
///   void **ArgBasePtrs; void **ArgPtrs; int64_t *ArgSizes; int64_t *ArgTypes;
///   void **ArgNames; void **ArgMappers;
///   uint64_t Tripcount;           // offset 56
///   uint64_t Flags;               // bit 0: NoWait
///   uint32_t NumTeams[3];         // offset 72
///   uint32_t ThreadLimit[3];      // offset 84
///   uint32_t DynCGroupMem;        // offset 96
/// };
/// ```
pub(crate) struct KernelArgs;

/// Field indices of [`KernelArgs`].
pub(crate) mod kernel_args {
    pub(crate) const VERSION: u32 = 0;
    pub(crate) const NUM_ARGS: u32 = 1;
    pub(crate) const BASE_PTRS: u32 = 2;
    pub(crate) const PTRS: u32 = 3;
    pub(crate) const SIZES: u32 = 4;
    pub(crate) const MAP_TYPES: u32 = 5;
    pub(crate) const NAMES: u32 = 6;
    pub(crate) const MAPPERS: u32 = 7;
    pub(crate) const TRIPCOUNT: u32 = 8;
    pub(crate) const FLAGS: u32 = 9;
    pub(crate) const NUM_TEAMS: u32 = 10;
    pub(crate) const THREAD_LIMIT: u32 = 11;
    pub(crate) const DYN_CGROUP_MEM: u32 = 12;
}

impl KernelArgs {
    pub(crate) fn declare<'ctx>(cx: &'ctx Context) -> StructType<'ctx> {
        let (i32t, i64t, ptr) = (cx.i32_type(), cx.i64_type(), cx.ptr_type(Default::default()));
        let dims = i32t.array_type(3);
        named_struct(
            cx,
            "struct.__tgt_kernel_arguments",
            &[
                i32t.into(),
                i32t.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                i64t.into(),
                i64t.into(),
                dims.into(),
                dims.into(),
                i32t.into(),
            ],
        )
    }
}

fn named_struct<'ctx>(
    cx: &'ctx Context,
    name: &str,
    fields: &[inkwell::types::BasicTypeEnum<'ctx>],
) -> StructType<'ctx> {
    let ty = cx.opaque_struct_type(name);
    ty.set_body(fields, false);
    ty
}

#[cfg(test)]
mod tests {
    //! Sizes and field offsets against the C layouts (x86_64 System V).

    use inkwell::targets::TargetData;

    use super::*;

    const X86_64_LAYOUT: &str =
        "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128";

    fn layout() -> TargetData {
        TargetData::create(X86_64_LAYOUT)
    }

    fn offsets(td: &TargetData, ty: StructType<'_>) -> Vec<u64> {
        (0..ty.count_fields()).map(|i| td.offset_of_element(&ty, i).unwrap()).collect()
    }

    #[test]
    fn ident_t_matches_c() {
        let cx = Context::create();
        let td = layout();
        let ty = Ident::declare(&cx);
        assert_eq!(td.get_abi_size(&ty), 24);
        assert_eq!(offsets(&td, ty), [0, 4, 8, 12, 16]);
    }

    #[test]
    fn llvm19_offload_entry_matches_c() {
        let cx = Context::create();
        let td = layout();
        let ty = OffloadEntry::declare(&cx, RuntimeAbi::Llvm19);
        assert_eq!(td.get_abi_size(&ty), 32);
        assert_eq!(offsets(&td, ty), [0, 8, 16, 24, 28]);
    }

    #[test]
    fn current_offload_entry_matches_c() {
        let cx = Context::create();
        let td = layout();
        let ty = OffloadEntry::declare(&cx, RuntimeAbi::Current);
        assert_eq!(td.get_abi_size(&ty), 56);
        assert_eq!(offsets(&td, ty), [0, 8, 10, 12, 16, 24, 32, 40, 48]);
    }

    #[test]
    fn device_image_and_bin_desc_match_c() {
        let cx = Context::create();
        let td = layout();
        let image = DeviceImage::declare(&cx);
        assert_eq!(td.get_abi_size(&image), 32);
        assert_eq!(offsets(&td, image), [0, 8, 16, 24]);
        let desc = BinDesc::declare(&cx);
        assert_eq!(td.get_abi_size(&desc), 32);
        assert_eq!(offsets(&td, desc), [0, 8, 16, 24]);
    }

    #[test]
    fn kernel_arguments_v3_match_c() {
        let cx = Context::create();
        let td = layout();
        let ty = KernelArgs::declare(&cx);
        assert_eq!(td.get_abi_size(&ty), 104);
        let o = offsets(&td, ty);
        assert_eq!(o[kernel_args::TRIPCOUNT as usize], 56);
        assert_eq!(o[kernel_args::FLAGS as usize], 64);
        assert_eq!(o[kernel_args::NUM_TEAMS as usize], 72);
        assert_eq!(o[kernel_args::THREAD_LIMIT as usize], 84);
        assert_eq!(o[kernel_args::DYN_CGROUP_MEM as usize], 96);
        assert_eq!(o, [0, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 84, 96]);
    }

    #[test]
    fn map_type_flags_are_llvms() {
        use map_type::*;
        assert_eq!([TO, FROM, ALWAYS, DELETE], [1, 2, 4, 8]);
        assert_eq!([TARGET_PARAM, LITERAL, IMPLICIT, PRESENT], [0x20, 0x100, 0x200, 0x1000]);
        assert_eq!(NONE, 0);
    }
}
