//! The offload lowering: rewrites the offload library's marker calls in a whole host module into
//! calls of LLVM's OpenMP offload runtime, and registers the device images.
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
mod object;
mod register;
mod runtime;

use anyhow::{Result, bail};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::BasicValue;

pub use abi::RuntimeAbi;
pub use binding::bind_runtime_through_table;
pub use object::write_object;
pub use register::Image;

use crate::lower::Lowering;
use crate::markers::Marker;
use crate::runtime::Runtime;

/// What to lower for.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The offload entry layout of the runtime the program links against.
    pub abi: RuntimeAbi,
    /// The device images to embed and register.
    pub images: Vec<Image>,
}

/// What the lowering rewrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub preloads: usize,
    pub releases: usize,
    pub updates: usize,
    pub launches: usize,
    /// Kernels launched, in first-launch order.
    pub kernels: Vec<String>,
}

/// Lowers every offload marker of `module` and registers `config.images`.
///
/// A module with no marker and no image is left untouched. A marker that cannot be read (an
/// unknown name, a non-constant kind, a wrong operand count) is an error naming the function
/// it is in; nothing is dropped silently.
pub fn lower<'ctx>(cx: &'ctx Context, module: &Module<'ctx>, config: &Config) -> Result<Report> {
    let markers = match markers::collect(module) {
        Ok(m) => m,
        Err(errors) => bail!("offload lowering failed:\n  {}", errors.join("\n  ")),
    };
    let mut report = Report::default();
    if markers.is_empty() && config.images.is_empty() {
        return Ok(report);
    }
    let rt = Runtime::declare(cx, module, config.abi);
    let mut lowering = Lowering::new(cx, module, &rt);
    let mut errors = Vec::new();
    for marker in &markers {
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
    // Nothing to register without kernels or images (a module that only maps data).
    let image_globals = if !lowering.kernels.is_empty() || !config.images.is_empty() {
        lowering.register(config.abi, &config.images)?
    } else {
        Vec::new()
    };
    // The cubin `launch_async!` loads, where the program launches asynchronously.
    let cuda_image = config
        .images
        .iter()
        .zip(&image_globals)
        .find(|(image, _)| image.triple == register::CUDA_TRIPLE)
        .map(|(image, global)| (*global, image.bytes.len()));
    register::define_cuda_image(cx, module, cuda_image)?;
    report.kernels = lowering.kernels.iter().map(|(k, _)| k.clone()).collect();
    remove_marker_declarations(module);
    if let Err(e) = module.verify() {
        bail!("offload lowering produced invalid IR (a bug in the lowering): {}", e.to_string());
    }
    Ok(report)
}

fn remove_marker_declarations(module: &Module<'_>) {
    let dead: Vec<_> = module
        .get_functions()
        .filter(|f| {
            f.get_name().to_bytes().starts_with(b"__rust_offload_") && f.count_basic_blocks() == 0
        })
        .filter(|f| f.as_global_value().as_pointer_value().get_first_use().is_none())
        .collect();
    for f in dead {
        // SAFETY: a declaration without uses.
        unsafe { f.delete() };
    }
}
