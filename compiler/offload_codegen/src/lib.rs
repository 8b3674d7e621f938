//! The offload lowering: rewrites the offload library's marker calls in host code into calls of
//! LLVM's OpenMP offload runtime, and registers the device images. Either over the whole program
//! in one module ([`lower`]), or one unit at a time ([`lower_unit`], e.g. each codegen unit of
//! each crate, so that the object of an unchanged unit can be kept) plus the program's
//! [`glue`]: the region ids and offload entries of its kernels, the images and their
//! registration, and the runtime binding.
//!
//! ```text
//! __rust_offload_preload(dev, p, n, kind)  ->  __tgt_target_data_begin_mapper (TO)
//! __rust_offload_release(dev, p, n, kind)  ->  __tgt_target_data_end_mapper (FROM for PreloadMut)
//! __rust_offload_update(dev, p, n, dir)    ->  __tgt_target_data_update_mapper (FROM or TO)
//! __rust_offload_launch.<k>(dev, g, b, ..) ->  begin_mapper -> __tgt_target_kernel -> end_mapper
//! ```
//! Names follow clang and rustc (`.offload_sizes.<sym>`, `.offload_maptypes.<sym>.begin`,
//! `.<kernel>.region_id`, `.offloading.entry.<kernel>`), so the output reads like upstream's.

#![warn(unreachable_pub)]

pub mod abi;
mod appending;
mod binding;
mod lower;
mod maptype;
mod markers;
pub mod nvptx;
mod object;
mod register;
mod runtime;

use anyhow::{Result, bail};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::GlobalValue;

pub use abi::RuntimeAbi;
pub use binding::{RuntimeFunction, bind_runtime_through_table};
pub use object::write_object;
pub use register::Image;

use crate::lower::{Lowering, RegionIds};
use crate::markers::Marker;
use crate::runtime::Runtime;

/// What to lower for.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The offload entry layout of the runtime the program links against.
    pub abi: RuntimeAbi,
    /// The device images to embed and register.
    pub images: Vec<Image>,
    /// The PTX the NVIDIA image was assembled from, embedded (NUL-terminated) for the library's
    /// own CUDA module, which the driver compiles from it (`__rust_offload_cuda_ptx`). Only
    /// embedded beside an `nvptx64-nvidia-cuda` image.
    pub cuda_ptx: Option<Vec<u8>>,
}

/// What the lowering rewrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub preloads: usize,
    pub releases: usize,
    pub updates: usize,
    pub launches: usize,
    /// Kernels launched, in first-launch order.
    pub kernels: Vec<String>,
}

/// Lowers every offload marker of `module` and registers `config.images`: `module` is the whole
/// program.
///
/// A module with no marker and no image is left untouched. A marker that cannot be read (an
/// unknown name, a non-constant kind, a wrong operand count) is an error naming the function
/// it is in; nothing is dropped silently.
pub fn lower<'ctx>(cx: &'ctx Context, module: &Module<'ctx>, config: &Config) -> Result<Report> {
    let markers = collect_markers(module)?;
    let mut report = Report::default();
    if markers.is_empty() && config.images.is_empty() {
        return Ok(report);
    }
    let rt = Runtime::declare(cx, module, config.abi);
    let mut lowering = Lowering::new(cx, module, &rt, RegionIds::Internal);
    lower_markers(&mut lowering, &markers, &mut report)?;
    let image_globals = lowering.register(config.abi, &config.images)?;
    let cuda = cuda_image(&config.images, &image_globals);
    register::define_cuda_image(cx, module, cuda, config.cuda_ptx.as_deref(), false)?;
    remove_marker_declarations(module);
    verify(module)?;
    Ok(report)
}

/// What lowering one unit of a program found, for the program's glue.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unit {
    pub report: Report,
    /// The runtime functions it calls, through `<name>.offload_rt`.
    pub runtime: Vec<RuntimeFunction>,
    /// It defines the library's runtime loader (`__offload_load_runtime`).
    pub defines_loader: bool,
    /// It defines the library's hook run before a cubin registers
    /// (`__offload_before_cuda_register`).
    pub defines_cuda_hook: bool,
    /// It declares the embedded cubin (`__rust_offload_cuda_image`) or its PTX: it launches
    /// through the library's own CUDA module.
    pub uses_cuda_image: bool,
    /// Functions it defines under a runtime function's name: other units' calls of them stay
    /// the program's own.
    pub defines_runtime_named: Vec<String>,
}

/// Lowers the markers of `module`, one unit of a program compiled on its own (a codegen unit of
/// one crate), for a program whose registration and runtime binding are in its glue (see
/// [`glue`]). What it refers to of the glue is hidden and external: `.<kernel>.region_id`,
/// `<runtime function>.offload_rt` and the embedded cubin.
pub fn lower_unit<'ctx>(cx: &'ctx Context, module: &Module<'ctx>, abi: RuntimeAbi) -> Result<Unit> {
    let markers = collect_markers(module)?;
    let mut report = Report::default();
    if !markers.is_empty() {
        let rt = Runtime::declare(cx, module, abi);
        let mut lowering = Lowering::new(cx, module, &rt, RegionIds::Declared);
        lower_markers(&mut lowering, &markers, &mut report)?;
        rt.remove_unused();
    }
    remove_marker_declarations(module);
    let defines =
        |name: &str| module.get_function(name).is_some_and(|f| f.count_basic_blocks() > 0);
    let mut uses_cuda_image = false;
    for name in register::CUDA_IMAGE_SYMBOLS {
        if let Some(g) = module.get_global(name) {
            if g.get_initializer().is_some() {
                bail!("`{name}` is already defined: only the offload lowering defines it");
            }
            uses_cuda_image = true;
        }
    }
    let unit = Unit {
        report,
        runtime: binding::redirect_to_glue(module),
        defines_loader: defines(binding::LOAD_RUNTIME),
        defines_cuda_hook: defines(register::BEFORE_CUDA_REGISTER),
        uses_cuda_image,
        defines_runtime_named: binding::runtime_named_definitions(module),
    };
    verify(module)?;
    Ok(unit)
}

/// What the glue of a program is made of: its units' findings, merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Program {
    /// Kernels launched, in first-launch order over the units.
    pub kernels: Vec<String>,
    /// Runtime functions called, each once, sorted.
    pub runtime: Vec<RuntimeFunction>,
    pub loader: bool,
    pub cuda_hook: bool,
    pub cuda_image: bool,
    /// Functions under a runtime function's name that the program defines itself, sorted.
    pub defined: Vec<String>,
}

impl Program {
    pub fn new<'a>(units: impl IntoIterator<Item = &'a Unit>) -> Result<Program> {
        let mut program = Program::default();
        for unit in units {
            for k in &unit.report.kernels {
                if !program.kernels.contains(k) {
                    program.kernels.push(k.clone());
                }
            }
            program.runtime.extend(unit.runtime.iter().cloned());
            program.loader |= unit.defines_loader;
            program.cuda_hook |= unit.defines_cuda_hook;
            program.cuda_image |= unit.uses_cuda_image;
            program.defined.extend(unit.defines_runtime_named.iter().cloned());
        }
        program.defined.sort();
        program.defined.dedup();
        program.runtime.sort();
        program.runtime.dedup();
        if let Some(w) = program.runtime.windows(2).find(|w| w[0].name == w[1].name) {
            bail!(
                "units declare `{}` differently: `{}` (calling convention {}) and `{}` (calling convention {})",
                w[0].name,
                w[0].ty,
                w[0].call_conv,
                w[1].ty,
                w[1].call_conv
            );
        }
        Ok(program)
    }
}

/// Fills `module`, empty but for its triple and data layout, with the glue of a program whose
/// units [`lower_unit`] lowered: the region ids and offload entries of its kernels, the
/// registration of `config.images`, the embedded cubin, and the runtime functions it calls
/// (through the library's loader where the program holds it). Returns how many runtime functions
/// the loader's table binds.
pub fn glue<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    program: &Program,
    config: &Config,
) -> Result<usize> {
    let rt = Runtime::declare(cx, module, config.abi);
    if program.cuda_hook {
        let ptr = cx.ptr_type(inkwell::AddressSpace::default());
        let hook_ty = cx.void_type().fn_type(&[ptr.into(), cx.i64_type().into()], false);
        module.add_function(register::BEFORE_CUDA_REGISTER, hook_ty, None);
    }
    let mut lowering = Lowering::new(cx, module, &rt, RegionIds::Exported);
    for kernel in &program.kernels {
        lowering.region_id(kernel);
    }
    let image_globals = lowering.register(config.abi, &config.images)?;
    if program.cuda_image {
        let cuda = cuda_image(&config.images, &image_globals);
        register::define_cuda_image(cx, module, cuda, config.cuda_ptx.as_deref(), true)?;
    }
    let bound =
        binding::export_trampolines(module, &program.runtime, program.loader, &program.defined)?;
    verify(module)?;
    Ok(bound)
}

/// [`lower_unit`] over `module`, then the [`glue`] of a program of that one unit linked into it:
/// what a program of one codegen unit becomes, in one module to read.
pub fn lower_split<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    config: &Config,
) -> Result<Unit> {
    let unit = lower_unit(cx, module, config.abi)?;
    let glue_module = cx.create_module("offload-glue");
    glue_module.set_triple(&module.get_triple());
    glue_module.set_data_layout(&module.get_data_layout());
    glue(cx, &glue_module, &Program::new([&unit])?, config)?;
    module
        .link_in_module(glue_module)
        .map_err(|e| anyhow::anyhow!("linking the glue into the unit: {e}"))?;
    Ok(unit)
}

fn collect_markers<'ctx>(module: &Module<'ctx>) -> Result<Vec<Marker<'ctx>>> {
    markers::collect(module)
        .map_err(|errors| anyhow::anyhow!("offload lowering failed:\n  {}", errors.join("\n  ")))
}

/// Rewrites every marker, counting them in `report`; every marker that cannot be lowered is
/// named in the error.
fn lower_markers<'ctx>(
    lowering: &mut Lowering<'_, 'ctx>,
    markers: &[Marker<'ctx>],
    report: &mut Report,
) -> Result<()> {
    let mut errors = Vec::new();
    for marker in markers {
        let (result, function) = match marker {
            Marker::Preload(m) => {
                report.preloads += 1;
                (lowering.preload(m), m.function)
            }
            Marker::Release(m) => {
                report.releases += 1;
                (lowering.release(m), m.function)
            }
            Marker::Update(m) => {
                report.updates += 1;
                (lowering.update(m), m.function)
            }
            Marker::Launch(l) => {
                report.launches += 1;
                (
                    lowering.launch(l).map_err(|e| e.context(format!("launch of `{}`", l.kernel))),
                    l.function,
                )
            }
        };
        if let Err(e) = result {
            errors.push(format!("{e:#} in `{}`", function.get_name().to_string_lossy()));
        }
    }
    if !errors.is_empty() {
        bail!("offload lowering failed:\n  {}", errors.join("\n  "));
    }
    report.kernels = lowering.kernels.iter().map(|(k, _)| k.clone()).collect();
    Ok(())
}

/// The NVIDIA image among `images` and its length, for `launch_async!`'s own CUDA module.
fn cuda_image<'ctx>(
    images: &[Image],
    globals: &[GlobalValue<'ctx>],
) -> Option<(GlobalValue<'ctx>, usize)> {
    images
        .iter()
        .zip(globals)
        .find(|(image, _)| image.triple == register::CUDA_TRIPLE)
        .map(|(image, global)| (*global, image.bytes.len()))
}

fn verify(module: &Module<'_>) -> Result<()> {
    module.verify().map_err(|e| {
        anyhow::anyhow!(
            "offload lowering produced invalid IR (a bug in the lowering): {}",
            e.to_string()
        )
    })
}

fn remove_marker_declarations(module: &Module<'_>) {
    let markers: Vec<_> = module
        .get_functions()
        .filter(|f| f.get_name().to_bytes().starts_with(offload_abi::intrinsics::PREFIX.as_bytes()))
        .collect();
    markers.into_iter().for_each(runtime::delete_if_unused);
}
