//! Registration of the device images: the offload entries, the `__tgt_bin_desc`, and the global
//! constructor that hands it to the runtime (`__tgt_register_lib`, priority 101, unregistered
//! at exit), named as clang's wrapper names them.

use anyhow::Result;
use inkwell::AddressSpace;
use inkwell::GlobalVisibility;
use inkwell::module::Linkage;
use inkwell::types::AnyType;
use inkwell::values::{BasicValueEnum, GlobalValue, StructValue};

use crate::abi::{OffloadEntry, RuntimeAbi};
use crate::appending;
use crate::lower::{Lowering, RegionIds};
use crate::runtime::make_private_constant;

/// Priority of the registration constructor, as clang's (before user constructors at 65535).
const REGISTRATION_PRIORITY: u64 = 101;
/// Alignment of an embedded image (page-aligned, as the hand-built reference did).
const IMAGE_ALIGN: u32 = 4096;

/// One device image to embed.
#[derive(Debug, Clone)]
pub struct Image {
    /// What the image is for, e.g. `x86_64-unknown-linux-gnu` or `nvptx64-nvidia-cuda`.
    pub triple: String,
    pub bytes: Vec<u8>,
}

impl<'ctx> Lowering<'_, 'ctx> {
    /// Emits the entries of every launched kernel, the images, the descriptor and its
    /// constructor. Returns the embedded images' globals, in `images`' order. Without kernels
    /// or images (a module that only maps data) there is nothing to register.
    pub(crate) fn register(
        &self,
        abi: RuntimeAbi,
        images: &[Image],
    ) -> Result<Vec<GlobalValue<'ctx>>> {
        if self.kernels.is_empty() && images.is_empty() {
            return Ok(Vec::new());
        }
        let cx = self.cx;
        let ptr_ty = cx.ptr_type(AddressSpace::default());
        let i64t = cx.i64_type();

        // 1. one `.offloading.entry.<kernel>` per kernel, gathered by the linker in one section
        let entries: Vec<GlobalValue> = self
            .kernels
            .iter()
            .map(|(kernel, region_id)| self.entry(abi, kernel, *region_id))
            .collect();
        let (begin, end) = if entries.is_empty() {
            (ptr_ty.const_null(), ptr_ty.const_null())
        } else {
            let section = abi.entries_section();
            let bound = |name: &str| {
                let g = self
                    .module
                    .get_global(name)
                    .unwrap_or_else(|| self.module.add_global(self.rt.entry_ty, None, name));
                g.set_linkage(Linkage::External);
                g.set_visibility(GlobalVisibility::Hidden);
                g.as_pointer_value()
            };
            (bound(&format!("__start_{section}")), bound(&format!("__stop_{section}")))
        };
        // `llvm.used`, not `llvm.compiler.used`: it also marks the sections SHF_GNU_RETAIN, so
        // linkers that do not keep sections for `__start_`/`__stop_` references (lld) keep them.
        appending::append_used(
            self.module,
            "llvm.used",
            &entries.iter().map(|g| g.as_pointer_value()).collect::<Vec<_>>(),
        );

        // 2. the images, each with the entries
        let mut image_globals = Vec::new();
        let image_values: Vec<StructValue> = images
            .iter()
            .map(|image| {
                let data = cx.const_string(&image.bytes, false);
                let g =
                    self.module.add_global(data.get_type(), None, ".omp_offloading.device_image");
                make_private_constant(g, &data);
                g.set_alignment(IMAGE_ALIGN);
                image_globals.push(g);
                let start = g.as_pointer_value();
                // SAFETY: one past the end of the image array.
                let stop = unsafe {
                    start
                        .const_gep(cx.i8_type(), &[i64t.const_int(image.bytes.len() as u64, false)])
                };
                self.rt.image_ty.const_named_struct(&[
                    start.into(),
                    stop.into(),
                    begin.into(),
                    end.into(),
                ])
            })
            .collect();
        // The NVIDIA image, for the library's hook below.
        let cuda_image = images
            .iter()
            .zip(&image_globals)
            .find(|(image, _)| image.triple == CUDA_TRIPLE)
            .map(|(image, global)| (image, *global, image.bytes.len()));
        let images_array = self.rt.image_ty.const_array(&image_values);
        let images_global =
            self.module.add_global(images_array.get_type(), None, ".omp_offloading.device_images");
        make_private_constant(images_global, &images_array);

        // 3. the descriptor
        let desc = self.rt.desc_ty.const_named_struct(&[
            cx.i32_type().const_int(images.len() as u64, false).into(),
            images_global.as_pointer_value().into(),
            begin.into(),
            end.into(),
        ]);
        let desc_global =
            self.module.add_global(self.rt.desc_ty, None, ".omp_offloading.descriptor");
        desc_global.set_initializer(&desc);
        desc_global.set_constant(true);
        desc_global.set_linkage(Linkage::Internal);

        // 4. `.omp_offloading.descriptor_reg`: register, and unregister at exit
        let void_fn = cx.void_type().fn_type(&[], false);
        let unreg = self.module.add_function(
            ".omp_offloading.descriptor_unreg",
            void_fn,
            Some(Linkage::Internal),
        );
        let b = cx.create_builder();
        b.position_at_end(cx.append_basic_block(unreg, "entry"));
        b.build_call(self.rt.unregister_lib, &[desc_global.as_pointer_value().into()], "")?;
        b.build_return(None)?;
        let reg = self.module.add_function(
            ".omp_offloading.descriptor_reg",
            void_fn,
            Some(Linkage::Internal),
        );
        b.position_at_end(cx.append_basic_block(reg, "entry"));
        // The library's hook, where a cubin registers and the library defines one: it sets the
        // GPUs' contexts up before the runtime's CUDA plugin does, and learns the image.
        if let Some((_, global, len)) = cuda_image
            && let Some(before) = self
                .module
                .get_function(BEFORE_CUDA_REGISTER)
                // The glue declares it where a unit defines it.
                .filter(|f| {
                    (f.count_basic_blocks() > 0 || self.region_ids == RegionIds::Exported)
                        && f.count_params() == 2
                })
        {
            let len = cx.i64_type().const_int(len as u64, false);
            b.build_call(before, &[global.as_pointer_value().into(), len.into()], "")?;
        }
        b.build_call(self.rt.register_lib, &[desc_global.as_pointer_value().into()], "")?;
        b.build_call(self.rt.atexit, &[unreg.as_global_value().as_pointer_value().into()], "")?;
        b.build_return(None)?;
        appending::append_ctor(
            self.module,
            REGISTRATION_PRIORITY,
            reg.as_global_value().as_pointer_value(),
        );
        Ok(image_globals)
    }

    fn entry(
        &self,
        abi: RuntimeAbi,
        kernel: &str,
        region_id: GlobalValue<'ctx>,
    ) -> GlobalValue<'ctx> {
        let name = self.cx.const_string(kernel.as_bytes(), true);
        let name_global = self.module.add_global(
            name.get_type(),
            None,
            &format!(".offloading.entry_name.{kernel}"),
        );
        name_global.set_initializer(&name);
        name_global.set_constant(true);
        name_global.set_linkage(Linkage::Internal);
        name_global.set_unnamed_addr(true);
        let init =
            OffloadEntry::init_kernel(self.cx, abi, self.rt.entry_ty, region_id, name_global);
        let g =
            self.module.add_global(self.rt.entry_ty, None, &format!(".offloading.entry.{kernel}"));
        g.set_initializer(&init);
        g.set_constant(true);
        g.set_linkage(Linkage::Internal);
        g.set_section(Some(abi.entries_section()));
        g.set_alignment(8);
        g
    }
}

/// Triple of the NVIDIA image, the one `launch_async!` loads into its own CUDA module.
pub(crate) const CUDA_TRIPLE: &str = offload_abi::nvptx::TRIPLE;
/// `void(ptr image, i64 len)`: the library's function that the registration constructor calls
/// first when a cubin registers (it sets the GPUs' contexts up before libomptarget's CUDA plugin
/// does).
pub(crate) use offload_abi::entry::BEFORE_CUDA_REGISTER;
pub(crate) use offload_abi::intrinsics::{
    CUDA_IMAGE as CUDA_IMAGE_SYMBOL, CUDA_IMAGE_LEN as CUDA_IMAGE_LEN_SYMBOL,
    CUDA_PTX as CUDA_PTX_SYMBOL,
};
/// What the library declares of the NVIDIA image, and the lowering defines.
pub(crate) const CUDA_IMAGE_SYMBOLS: [&str; 3] =
    [CUDA_IMAGE_SYMBOL, CUDA_IMAGE_LEN_SYMBOL, CUDA_PTX_SYMBOL];

/// Defines the library's `__rust_offload_cuda_image`, `__rust_offload_cuda_image_len` and
/// `__rust_offload_cuda_ptx` where the module declares them (a program that launches through
/// the library's own CUDA module), from the embedded NVIDIA image and its PTX, or null and 0
/// when there is none, so that the program links either way:
/// ```llvm
/// @__rust_offload_cuda_image = internal constant ptr @.omp_offloading.device_image
/// @__rust_offload_cuda_image_len = internal constant i64 <bytes>
/// @__rust_offload_cuda_ptx = internal constant ptr @.offload_cuda_ptx
/// @.offload_cuda_ptx = private unnamed_addr constant [<bytes + 1> x i8] c"<PTX>\00"
/// ```
/// The PTX is embedded only beside a cubin. With `export` (the glue, for units that declare
/// them), they are added, hidden and external.
pub(crate) fn define_cuda_image<'ctx>(
    cx: &'ctx inkwell::context::Context,
    module: &inkwell::module::Module<'ctx>,
    image: Option<(GlobalValue<'ctx>, usize)>,
    ptx: Option<&[u8]>,
    export: bool,
) -> Result<()> {
    let define = |name: &str, init: BasicValueEnum<'ctx>| -> Result<()> {
        if export {
            let g = module.add_global(init.get_type(), None, name);
            g.set_initializer(&init);
            g.set_constant(true);
            g.set_linkage(Linkage::External);
            g.set_visibility(GlobalVisibility::Hidden);
            return Ok(());
        }
        let Some(g) = module.get_global(name) else { return Ok(()) };
        if g.get_initializer().is_some() {
            anyhow::bail!("`{name}` is already defined: only the offload lowering defines it");
        }
        if g.get_value_type() != init.get_type().as_any_type_enum() {
            anyhow::bail!(
                "`{name}` is declared as {}, expected {}",
                g.get_value_type(),
                init.get_type()
            );
        }
        g.set_initializer(&init);
        g.set_constant(true);
        g.set_linkage(Linkage::Internal);
        Ok(())
    };
    let ptr_ty = cx.ptr_type(AddressSpace::default());
    let (start, len) = match image {
        Some((g, len)) => (g.as_pointer_value(), len as u64),
        None => (ptr_ty.const_null(), 0),
    };
    define(CUDA_IMAGE_SYMBOL, start.into())?;
    define(CUDA_IMAGE_LEN_SYMBOL, cx.i64_type().const_int(len, false).into())?;
    let wanted = export || module.get_global(CUDA_PTX_SYMBOL).is_some();
    let ptx = match (image, ptx) {
        (Some(_), Some(ptx)) if wanted => {
            if ptx.contains(&0) {
                anyhow::bail!("the NVIDIA image's PTX holds a NUL byte: it is not PTX text");
            }
            let text = cx.const_string(ptx, true);
            let g = module.add_global(text.get_type(), None, ".offload_cuda_ptx");
            make_private_constant(g, &text);
            g.as_pointer_value()
        }
        _ => ptr_ty.const_null(),
    };
    define(CUDA_PTX_SYMBOL, ptx.into())
}
