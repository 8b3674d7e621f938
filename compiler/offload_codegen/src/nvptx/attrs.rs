//! Each kernel's options, which the kernel macro leaves in a constant
//! (`offload_abi::kernel::ATTRS_PREFIX`): its launch bounds (`.maxntid`, and the ranges of the
//! thread indices that bounds along each axis give) and floating-point contraction.

use anyhow::{Result, anyhow};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::{
    AsValueRef, BasicValueEnum, CallSiteValue, FastMathFlags, FunctionValue, GlobalValue,
    InstructionOpcode,
};
use offload_abi::kernel::{ATTR_FP_CONTRACT, ATTR_MIN_BLOCKS_SHIFT, ATTRS_PREFIX};

/// One kernel's options, as the macro left them.
pub(super) struct KernelAttrs {
    pub(super) kernel: String,
    /// Threads per block at most; 0: no launch bounds.
    pub(super) threads: u32,
    /// Threads along x, y and z at most; `[0; 3]`: along no axis.
    pub(super) axes: [u32; 3],
    flags: u32,
}

impl KernelAttrs {
    pub(super) fn fp_contract(&self) -> bool {
        self.flags & ATTR_FP_CONTRACT != 0
    }

    /// Blocks a multiprocessor should hold at once (0: no wish).
    fn min_blocks(&self) -> u32 {
        (self.flags >> ATTR_MIN_BLOCKS_SHIFT) & 0xff
    }

    /// Gives kernel `f` its launch bounds: `nvvm.maxntid` (PTX's `.maxntid`), and along each
    /// axis the ranges of its thread indices and block sizes; and `nvvm.minctasm` (PTX's
    /// `.minnctapersm`) where it asks for blocks at once.
    pub(super) fn bound<'ctx>(&self, cx: &'ctx Context, f: FunctionValue<'ctx>) {
        if self.min_blocks() > 0 {
            let blocks = self.min_blocks().to_string();
            f.add_attribute(
                AttributeLoc::Function,
                cx.create_string_attribute("nvvm.minctasm", &blocks),
            );
        }
        let maxntid = if self.axes == [0; 3] {
            self.threads.to_string()
        } else {
            bound_axes(cx, f, self.axes);
            format!("{},{},{}", self.axes[0], self.axes[1], self.axes[2])
        };
        f.add_attribute(
            AttributeLoc::Function,
            cx.create_string_attribute("nvvm.maxntid", &maxntid),
        );
    }
}

/// The kernels' options the macro left as `[u32; 5]` constants, removed from the module.
pub(super) fn take_kernel_attrs(module: &Module<'_>) -> Result<Vec<KernelAttrs>> {
    let globals: Vec<GlobalValue<'_>> = module
        .get_globals()
        .filter(|g| g.get_name().to_bytes().starts_with(ATTRS_PREFIX.as_bytes()))
        .collect();
    let mut attrs = Vec::new();
    for g in globals {
        let name = g.get_name().to_string_lossy().into_owned();
        let words = g
            .get_initializer()
            .and_then(u32_array)
            .filter(|w| w.len() == 5)
            .ok_or_else(|| anyhow!("`{name}` is not a [u32; 5] constant"))?;
        attrs.push(KernelAttrs {
            kernel: name[ATTRS_PREFIX.len()..].to_owned(),
            threads: words[0],
            axes: [words[1], words[2], words[3]],
            flags: words[4],
        });
        crate::appending::remove_from_used(module, g);
        // SAFETY: nothing refers to it now (`#[used]` was its only user).
        unsafe { g.delete() };
    }
    Ok(attrs)
}

/// Tells the optimiser the ranges a kernel launched within `axes` sees: each thread index
/// below its axis's bound, each block size at most it (`range` on the special registers' reads;
/// the launch refuses larger blocks). Bounds checks of indices made from them fold away.
fn bound_axes<'ctx>(cx: &'ctx Context, f: FunctionValue<'ctx>, axes: [u32; 3]) {
    let registers = ["x", "y", "z"].into_iter().zip(axes).flat_map(|(axis, bound)| {
        [
            (format!("llvm.nvvm.read.ptx.sreg.tid.{axis}"), 0, bound),
            (format!("llvm.nvvm.read.ptx.sreg.ntid.{axis}"), 1, bound + 1),
        ]
    });
    let registers: Vec<(String, u64, u32)> = registers.collect();
    let range = Attribute::get_named_enum_kind_id("range");
    for block in f.get_basic_block_iter() {
        for inst in block.get_instructions() {
            let Some(callee) = crate::markers::callee_name(inst) else { continue };
            let Some(&(_, low, high)) = registers.iter().find(|(name, ..)| *name == callee) else {
                continue;
            };
            let (low, high) = (low, u64::from(high));
            // SAFETY: a 32-bit range attribute [low, high) for the call's i32 result.
            let attribute = unsafe {
                Attribute::new(inkwell::llvm_sys::core::LLVMCreateConstantRangeAttribute(
                    cx.raw(),
                    range,
                    32,
                    &low,
                    &high,
                ))
            };
            // SAFETY: `inst` is a call (`called`).
            let call = unsafe { CallSiteValue::new(inst.as_value_ref()) };
            call.add_attribute(AttributeLoc::Return, attribute);
        }
    }
}

/// The `u32`s of a constant array: rustc writes a static's bytes (`[N x i8]`, little-endian as
/// nvptx64 is), a C front end its integers.
fn u32_array(init: BasicValueEnum<'_>) -> Option<Vec<u32>> {
    let BasicValueEnum::ArrayValue(array) = init else { return None };
    let elements: Vec<u64> = (0..array.get_type().len())
        .map(|i| {
            // SAFETY: `i` is within the constant array.
            let element = unsafe {
                inkwell::llvm_sys::core::LLVMGetAggregateElement(array.as_value_ref(), i)
            };
            // SAFETY: a constant integer is read as one.
            (!element.is_null()
                && unsafe { !inkwell::llvm_sys::core::LLVMIsAConstantInt(element).is_null() })
            .then(|| unsafe { inkwell::llvm_sys::core::LLVMConstIntGetZExtValue(element) })
        })
        .collect::<Option<_>>()?;
    match array.get_type().get_element_type().into_int_type().get_bit_width() {
        8 if elements.len().is_multiple_of(4) => Some(
            elements
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0] as u8, b[1] as u8, b[2] as u8, b[3] as u8]))
                .collect(),
        ),
        32 => Some(elements.into_iter().map(|w| w as u32).collect()),
        _ => None,
    }
}

/// Marks every floating-point addition, subtraction and multiplication of `f` `contract`: the
/// backend may then fuse `a * b + c` into one `fma.rn` (one rounding instead of two).
pub(super) fn contract(f: FunctionValue<'_>) {
    for block in f.get_basic_block_iter() {
        for inst in block.get_instructions() {
            if matches!(
                inst.get_opcode(),
                InstructionOpcode::FAdd | InstructionOpcode::FSub | InstructionOpcode::FMul
            ) && let Ok(flags) = inst.get_fast_math_flags()
            {
                let _ = inst.set_fast_math_flags(flags | FastMathFlags::AllowContract);
            }
        }
    }
}
