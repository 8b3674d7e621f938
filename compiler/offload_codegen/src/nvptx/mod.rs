//! The device stage of the NVIDIA image: what rustc cannot say in the kernels' LLVM IR, said
//! after its fat LTO, then the module optimised again and compiled to PTX.
//!
//! ```text
//! rustc --emit=llvm-bc (fat LTO: the kernels, offload, core, alloc)
//!   -> shared memory: calls of `__offload_shared_memory()` become the address of the block's
//!      `addrspace(3)` window, so every access through it is `ld.shared`/`st.shared`/`atom.shared`
//!   (shared.rs)
//!   -> small loops that load memory: unrolled by 4, as nvcc unrolls them (loops.rs)
//!   -> each kernel's options (`__offload_kernel_attrs.<kernel>`): launch bounds
//!      (`.maxntid`, index ranges), floating-point contraction (`contract`: `fma.rn`) (attrs.rs)
//!   -> the runtime's device environment, which libomptarget 19 looks up in every image it loads
//!      (environment.rs)
//!   -> infer-address-spaces, default<O3> with the NVPTX target machine, full unrolling of
//!      loops of a constant trip count up to 2000 instructions, PTX (ptx.rs)
//! ```
//!
//! Rust has no way to put a value in a GPU address space, to unroll a loop, or to set a
//! function's PTX directives; rustc, lowering `#[offload::kernel]` itself one day, would
//! emit the same IR from the same facts.

use anyhow::{Result, anyhow, bail};
use inkwell::context::Context;
use inkwell::module::Module;
use offload_abi::kernel::ATTRS_PREFIX;

mod attrs;
mod environment;
mod loops;
mod ptx;
mod shared;

pub use ptx::compile_ptx;

/// LLVM's calling convention of a PTX kernel (`ptx_kernel`).
const PTX_KERNEL_CC: u32 = 71;

/// What the device stage did, for `-v` and the tests.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DeviceReport {
    /// Kernels found, in module order.
    pub kernels: Vec<String>,
    /// `(kernel, threads, [x, y, z])` of each kernel with launch bounds (`[0; 3]`: along no
    /// axis).
    pub launch_bounds: Vec<(String, u32, [u32; 3])>,
    /// Kernels whose arithmetic was contracted.
    pub contracted: Vec<String>,
    /// Small loops marked to be unrolled by 4.
    pub unrolled: usize,
}

/// Rewrites `module`, the NVIDIA image's kernels after rustc's fat LTO, as the module's doc says;
/// `kernels` are the `#[offload::kernel]` entry points the image must define (the others, if
/// any, are left as they are).
pub fn lower_device<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    kernels: &[String],
) -> Result<DeviceReport> {
    let mut report = DeviceReport::default();
    shared::define_shared_memory(cx, module)?;
    environment::define_device_environment(cx, module)?;
    let attrs = attrs::take_kernel_attrs(module)?;
    for name in kernels {
        let f = module
            .get_function(name)
            .filter(|f| f.get_call_conventions() == PTX_KERNEL_CC && f.count_basic_blocks() > 0)
            .ok_or_else(|| anyhow!("the NVIDIA image defines no kernel `{name}`"))?;
        report.kernels.push(name.clone());
        report.unrolled += loops::unroll_small_loops(cx, f);
        let Some(attr) = attrs.iter().find(|a| a.kernel == *name) else { continue };
        if attr.threads > 0 {
            attr.bound(cx, f);
            report.launch_bounds.push((name.clone(), attr.threads, attr.axes));
        }
        if attr.fp_contract() {
            attrs::contract(f);
            report.contracted.push(name.clone());
        }
    }
    if let Some(a) = attrs.iter().find(|a| !kernels.contains(&a.kernel)) {
        bail!("`{ATTRS_PREFIX}{}` names no kernel of the image", a.kernel);
    }
    module.verify().map_err(|e| anyhow!("the device stage produced invalid IR (a bug): {e}"))?;
    Ok(report)
}
