//! Finding the marker calls in a module and reading their operands.
//!
//! Every call of a `__rust_offload_*` function is either understood here or reported: nothing
//! is silently dropped.

use inkwell::module::Module;
use inkwell::values::{
    BasicValueEnum, CallSiteValue, FunctionValue, InstructionOpcode, InstructionValue, IntValue,
};
use offload_abi::intrinsics::{LAUNCH_PREFIX, PREFIX as MARKER_PREFIX, PRELOAD, RELEASE, UPDATE};

/// One marker call to rewrite.
pub(crate) enum Marker<'ctx> {
    Preload(MapCall<'ctx>),
    Release(MapCall<'ctx>),
    /// `kind` is the direction.
    Update(MapCall<'ctx>),
    Launch(LaunchCall<'ctx>),
}

/// A preload or release: `(device, ptr, size, kind)`.
pub(crate) struct MapCall<'ctx> {
    pub(crate) call: InstructionValue<'ctx>,
    pub(crate) function: FunctionValue<'ctx>,
    pub(crate) device: IntValue<'ctx>,
    pub(crate) ptr: BasicValueEnum<'ctx>,
    pub(crate) size: IntValue<'ctx>,
    pub(crate) kind: i64,
}

/// A launch: `(device, grid, block, (kind, value, size)*)`.
pub(crate) struct LaunchCall<'ctx> {
    pub(crate) call: InstructionValue<'ctx>,
    pub(crate) function: FunctionValue<'ctx>,
    pub(crate) kernel: String,
    pub(crate) device: IntValue<'ctx>,
    pub(crate) grid: IntValue<'ctx>,
    pub(crate) block: IntValue<'ctx>,
    pub(crate) slots: Vec<Slot<'ctx>>,
}

pub(crate) struct Slot<'ctx> {
    pub(crate) kind: i64,
    pub(crate) value: BasicValueEnum<'ctx>,
    pub(crate) size: IntValue<'ctx>,
}

/// Every marker call of the module, in order, or the list of calls that could not be read.
pub(crate) fn collect<'ctx>(module: &Module<'ctx>) -> Result<Vec<Marker<'ctx>>, Vec<String>> {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for function in module.get_functions() {
        for block in function.get_basic_blocks() {
            for inst in block.get_instructions() {
                let Some(callee) = callee_name(inst) else { continue };
                if !callee.starts_with(MARKER_PREFIX) {
                    continue;
                }
                let at = || format!("in `{}`", function.get_name().to_string_lossy());
                if inst.get_opcode() != InstructionOpcode::Call {
                    errors.push(format!(
                        "`{callee}` {} is not a plain call (the markers cannot unwind)",
                        at()
                    ));
                    continue;
                }
                match read(inst, function, &callee) {
                    Ok(m) => found.push(m),
                    Err(e) => errors.push(format!("{e} {}", at())),
                }
            }
        }
    }
    if errors.is_empty() { Ok(found) } else { Err(errors) }
}

/// The name of the function a `call` or `invoke` calls directly (its last operand).
pub(crate) fn callee_name(inst: InstructionValue<'_>) -> Option<String> {
    if !matches!(inst.get_opcode(), InstructionOpcode::Call | InstructionOpcode::Invoke) {
        return None;
    }
    let callee = inst.get_operand(inst.get_num_operands().checked_sub(1)?)?.value()?;
    let BasicValueEnum::PointerValue(ptr) = callee else { return None };
    Some(ptr.get_name().to_str().ok()?.to_owned())
}

fn read<'ctx>(
    inst: InstructionValue<'ctx>,
    function: FunctionValue<'ctx>,
    callee: &str,
) -> Result<Marker<'ctx>, String> {
    let call = CallSiteValue::try_from(inst).map_err(|_| format!("`{callee}` is not a call"))?;
    // The last operand of a call is the callee itself.
    let args: Vec<BasicValueEnum<'ctx>> = (0..call.count_arguments())
        .map(|i| inst.get_operand(i).and_then(|o| o.value()).ok_or("operand"))
        .collect::<Result<_, _>>()
        .map_err(|_| format!("`{callee}` has an operand that is not a value"))?;
    match callee {
        PRELOAD | RELEASE | UPDATE => {
            let [device, ptr, size, kind] = args[..] else {
                return Err(format!(
                    "`{callee}` takes 4 operands (device, ptr, size, kind), found {}",
                    args.len()
                ));
            };
            let map = MapCall {
                call: inst,
                function,
                device: int(device, callee, "device")?,
                ptr,
                size: int(size, callee, "size")?,
                kind: constant(kind, callee, "kind")?,
            };
            Ok(match callee {
                PRELOAD => Marker::Preload(map),
                RELEASE => Marker::Release(map),
                _ => Marker::Update(map),
            })
        }
        _ if callee.starts_with(LAUNCH_PREFIX) => {
            let kernel = callee[LAUNCH_PREFIX.len()..].to_owned();
            if kernel.is_empty() {
                return Err(format!("`{callee}` names no kernel"));
            }
            if args.len() < 3 || !(args.len() - 3).is_multiple_of(3) {
                return Err(format!(
                    "`{callee}` takes (device, grid, block) and then (kind, value, size) triples, found {} operands",
                    args.len()
                ));
            }
            let slots = args[3..]
                .chunks(3)
                .enumerate()
                .map(|(i, t)| {
                    let what = format!("kind of slot {i}");
                    Ok(Slot {
                        kind: constant(t[0], callee, &what)?,
                        value: t[1],
                        size: int(t[2], callee, "size")?,
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(Marker::Launch(LaunchCall {
                call: inst,
                function,
                kernel,
                device: int(args[0], callee, "device")?,
                grid: int(args[1], callee, "grid")?,
                block: int(args[2], callee, "block")?,
                slots,
            }))
        }
        _ => Err(format!(
            "unknown offload intrinsic `{callee}` (this lowering knows {PRELOAD}, {RELEASE}, {UPDATE}, {LAUNCH_PREFIX}<kernel>)"
        )),
    }
}

fn int<'ctx>(v: BasicValueEnum<'ctx>, callee: &str, what: &str) -> Result<IntValue<'ctx>, String> {
    match v {
        BasicValueEnum::IntValue(i) => Ok(i),
        _ => Err(format!("`{callee}`: the {what} operand must be an integer")),
    }
}

fn constant(v: BasicValueEnum<'_>, callee: &str, what: &str) -> Result<i64, String> {
    int(v, callee, what)?.get_sign_extended_constant().ok_or_else(|| {
        format!(
            "`{callee}`: the {what} operand must be a constant (it comes from an associated const)"
        )
    })
}
