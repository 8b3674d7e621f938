//! The device environment the runtime writes into every NVIDIA image it loads: libomptarget 19
//! looks the global up with `cuModuleGetGlobal` and, where it is missing, goes on. The miss is
//! still a failed driver call, which `compute-sanitizer` reports in every program; defining the
//! global (zeros, as large as the runtime's struct) makes the lookup and the copy succeed.

use anyhow::{Result, bail};
use inkwell::AddressSpace;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use offload_abi::nvptx::{DEVICE_ENVIRONMENT, DEVICE_ENVIRONMENT_BYTES};

/// PTX's global state space.
const GLOBAL: u16 = 1;

/// Defines `.visible .global .align 8 .b8 __omp_rtl_device_environment[48]`.
pub(super) fn define_device_environment<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
) -> Result<()> {
    if module.get_global(DEVICE_ENVIRONMENT).is_some() {
        bail!("`{DEVICE_ENVIRONMENT}` is defined in the kernels: only the device stage defines it");
    }
    let bytes = cx.i8_type().array_type(DEVICE_ENVIRONMENT_BYTES);
    let global = module.add_global(bytes, Some(AddressSpace::from(GLOBAL)), DEVICE_ENVIRONMENT);
    global.set_linkage(Linkage::External);
    global.set_alignment(8);
    global.set_initializer(&bytes.const_zero());
    Ok(())
}
