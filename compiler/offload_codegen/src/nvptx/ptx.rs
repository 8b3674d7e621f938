//! The device module, optimised again with the NVPTX target machine and compiled to PTX.

use std::ffi::CString;

use anyhow::{Context as _, Result, anyhow};
use inkwell::OptimizationLevel;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target};

/// The largest loop of a constant trip count that LLVM unrolls fully, in instructions once
/// unrolled (LLVM's own default is 300). A kernel's inner loops are short and their bodies big
/// (`for k in 0..8` over an 8x8 block of products: 600 and more): unrolled, their shared-memory
/// loads overlap the arithmetic of the iterations around them, as nvcc's `#pragma unroll`
/// makes them; a Rust kernel has no pragma to ask for it.
const FULL_UNROLL_THRESHOLD: u32 = 2000;

/// Optimises `module` for `cpu` and returns its PTX: address spaces inferred first (so that the
/// optimiser knows what the shared window's alignment makes of its accesses), then
/// `default<O3>` (where the facts the device stage added pay: launch bounds, unroll
/// counts).
pub fn compile_ptx(module: &Module<'_>, cpu: &str) -> Result<String> {
    Target::initialize_nvptx(&InitializationConfig::default());
    set_unroll_threshold();
    let triple = module.get_triple();
    let target =
        Target::from_triple(&triple).map_err(|e| anyhow!("no LLVM target for {triple}: {e}"))?;
    let machine = target
        .create_target_machine(
            &triple,
            cpu,
            "",
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| anyhow!("cannot create a target machine for {triple} ({cpu})"))?;
    module
        .run_passes(
            "function(infer-address-spaces),default<O3>",
            &machine,
            PassBuilderOptions::create(),
        )
        .map_err(|e| anyhow!("optimising the device module: {e}"))?;
    let ptx = machine
        .write_to_memory_buffer(module, FileType::Assembly)
        .map_err(|e| anyhow!("compiling the device module to PTX: {e}"))?;
    String::from_utf8(ptx.as_slice().to_vec()).context("the PTX is not UTF-8")
}

/// LLVM's `-unroll-threshold`, set once per process (its options are process-wide): this
/// process compiles nothing but device code with it.
fn set_unroll_threshold() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let args = [
            c"offload-ld".to_owned(),
            CString::new(format!("-unroll-threshold={FULL_UNROLL_THRESHOLD}")).expect("no NUL"),
        ];
        let argv: Vec<*const std::ffi::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        // SAFETY: two NUL-terminated strings, an argument count that matches, no overview.
        unsafe {
            inkwell::llvm_sys::support::LLVMParseCommandLineOptions(
                argv.len() as i32,
                argv.as_ptr(),
                std::ptr::null(),
            )
        };
    });
}
