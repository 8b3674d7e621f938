//! The block's shared memory in the shared state space: the library's calls of
//! `__offload_shared_memory()` become the generic address of an `addrspace(3)` window, so that
//! LLVM's address-space inference gives every access through `offload::gpu::shared` the shared
//! state space (`ld.shared`, `st.shared`, `atom.shared`), and knows the window's alignment
//! (1024: four aligned `f32`s are one vector load, and `wgmma`'s tiles find their swizzle). A generic access tests the window at run
//! time, and a generic atomic on shared memory is several times slower.

use anyhow::{Result, anyhow, bail};
use inkwell::AddressSpace;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::values::{AnyValueEnum, BasicValue as _, InstructionOpcode};
use offload_abi::nvptx::SHARED_MEMORY_FN;

/// The block's dynamic shared memory, as PTX names it: `.extern .shared .align 1024 .b8 NAME[]`.
const SHARED_MEMORY_GLOBAL: &str = "__offload_shared";
/// The window's alignment: 1024 bytes, where the 128-byte swizzle of `wgmma`'s tiles repeats
/// (the shared memory a launch gives starts there on NVIDIA GPUs).
const WINDOW_ALIGN: u32 = 1024;
/// PTX's address space of a block's shared memory.
const SHARED: u16 = 3;

/// Replaces every call of [`SHARED_MEMORY_FN`] with the generic address of the block's shared
/// window, `addrspacecast (ptr addrspace(3) @__offload_shared to ptr)`.
pub(super) fn define_shared_memory<'ctx>(cx: &'ctx Context, module: &Module<'ctx>) -> Result<()> {
    let Some(f) = module.get_function(SHARED_MEMORY_FN) else { return Ok(()) };
    if f.count_basic_blocks() > 0 {
        bail!("`{SHARED_MEMORY_FN}` is defined in the kernels: only the device stage defines it");
    }
    let window = module.add_global(
        cx.i8_type().array_type(0),
        Some(AddressSpace::from(SHARED)),
        SHARED_MEMORY_GLOBAL,
    );
    window.set_linkage(Linkage::External);
    window.set_alignment(WINDOW_ALIGN);
    let generic =
        window.as_pointer_value().const_address_space_cast(cx.ptr_type(AddressSpace::default()));
    let calls: Vec<_> = f
        .as_global_value()
        .as_pointer_value()
        .get_first_use()
        .into_iter()
        .flat_map(|u| std::iter::successors(Some(u), |u| u.get_next_use()))
        .map(|u| u.get_user())
        .collect();
    for user in calls {
        let call = match user {
            AnyValueEnum::PointerValue(p) => p,
            _ => bail!("`{SHARED_MEMORY_FN}` is used other than called"),
        };
        let inst = call
            .as_instruction()
            .filter(|i| i.get_opcode() == InstructionOpcode::Call)
            .ok_or_else(|| anyhow!("`{SHARED_MEMORY_FN}` is used other than called"))?;
        call.replace_all_uses_with(generic);
        inst.erase_from_basic_block();
    }
    // SAFETY: a declaration whose calls are all gone.
    unsafe { f.delete() };
    Ok(())
}
