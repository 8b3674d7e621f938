//! The device images' side: the kernel's body and its entry points, nvptx and host-offload.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{Ident, ItemFn};

use offload_abi::kernel::{ATTR_FP_CONTRACT, ATTR_MIN_BLOCKS_SHIFT, ATTRS_PREFIX, MARKER_PREFIX};

use super::instances::Instance;
use super::options::{Bounds, Options};
use super::signature::{Param, Shape};

impl Param {
    /// The slot parameters of the entry point (name and type), and the expression rebuilding
    /// the argument. Address slots are typed as pointers, so the nvptx backend knows them for
    /// global memory (`ld.global`, not generic loads); literal slots are `u64`. The rebuilt
    /// argument's type is inferred from the kernel's parameter: written out, it could name the
    /// kernel's lifetime parameters, which the entry point does not have.
    pub(super) fn device_slots(&self) -> (Vec<(Ident, TokenStream)>, TokenStream) {
        let address = format_ident!("{}_slot", self.name);
        let len = format_ident!("{}_len", self.name);
        let p = quote!(::offload::__private);
        let ptr = quote!(*mut u8);
        let word = quote!(u64);
        match &self.shape {
            Shape::Value(_) => (vec![(address.clone(), word)], quote!(#p::Param::value(#address))),
            // At the parameter's type: unsized data is refused there (`Param::reference`).
            Shape::Ref { mutable: false, .. } => (
                vec![(address.clone(), ptr)],
                quote_spanned!(self.ty.span()=> #p::Param::reference(#address)),
            ),
            Shape::Ref { mutable: true, .. } => (
                vec![(address.clone(), ptr)],
                quote_spanned!(self.ty.span()=> #p::Param::reference_mut(#address)),
            ),
            Shape::Slice { mutable: false, .. } => (
                vec![(address.clone(), ptr), (len.clone(), word)],
                quote!(#p::Param::slice(#address, #len)),
            ),
            Shape::Slice { mutable: true, .. } => (
                vec![(address.clone(), ptr), (len.clone(), word)],
                quote!(#p::Param::slice_mut(#address, #len)),
            ),
            Shape::Region { .. } => (
                vec![(address.clone(), ptr), (len.clone(), word)],
                quote!(#p::Param::region(#address, #len)),
            ),
        }
    }
}

/// The kernel's own body in the device images, always inlined into its entry points (an
/// `#[inline]` of the user's would be a second, conflicting one).
pub(super) fn device_body(func: &ItemFn) -> TokenStream {
    let attrs: Vec<_> = func.attrs.iter().filter(|a| !a.path().is_ident("inline")).collect();
    let (vis, sig, body) = (&func.vis, &func.sig, &func.block);
    quote! {
        #[cfg(offload_device)]
        #[allow(dead_code)]
        #[inline(always)]
        #(#attrs)*
        #vis #sig #body
    }
}

/// The entry points of the device images for one instance (or the kernel itself): `extern
/// "ptx-kernel"` on nvptx, `extern "C"` looping over the grid in the host-offload image. Both
/// take the runtime's leading `dyn_ptr` slot, the geometry slot, then one 8-byte slot per
/// parameter slot (a pointer for addresses, a `u64` for literals).
pub(super) fn device_entry(
    func: &ItemFn,
    params: &[Param],
    options: &Options,
    instance: &Instance,
) -> TokenStream {
    let name = &func.sig.ident;
    let symbol = &instance.symbol;
    let upper = symbol.to_uppercase();
    let attrs_symbol = format!("{ATTRS_PREFIX}{symbol}");
    let attrs_static = format_ident!("__OFFLOAD_KERNEL_ATTRS_{}", upper);
    let threads = options.launch_bounds.map_or(0, Bounds::threads);
    let [x, y, z] = options.launch_bounds.map_or([0; 3], Bounds::axes);
    let flags = (u32::from(options.fp_contract) * ATTR_FP_CONTRACT)
        | (u32::from(options.min_blocks.unwrap_or(0)) << ATTR_MIN_BLOCKS_SHIFT);
    let kernel_attrs = (threads != 0 || flags != 0).then(|| {
        quote! {
            /// This kernel's options, for the device stage of the build (which removes it).
            #[cfg(all(offload_device, target_arch = "nvptx64"))]
            #[doc(hidden)]
            #[used]
            #[unsafe(export_name = #attrs_symbol)]
            pub static #attrs_static: [u32; 5] = [#threads, #x, #y, #z, #flags];
        }
    });
    let entry = format_ident!("__offload_entry_{}", symbol);
    let marker_symbol = format!("{MARKER_PREFIX}{symbol}");
    let marker_static = format_ident!("__OFFLOAD_KERNEL_{}", upper);
    let (slots, args): (Vec<_>, Vec<_>) = params.iter().map(Param::device_slots).unzip();
    let (slots, slot_types): (Vec<Ident>, Vec<TokenStream>) = slots.into_iter().flatten().unzip();
    let generic_args = &instance.args;
    let callee =
        if generic_args.is_empty() { quote!(#name) } else { quote!(#name::<#(#generic_args),*>) };
    quote! {
        #kernel_attrs

        #[cfg(all(offload_device, target_arch = "nvptx64"))]
        #[doc(hidden)]
        #[unsafe(export_name = #symbol)]
        pub unsafe extern "ptx-kernel" fn #entry(_dyn_ptr: *mut u8, _geometry: u64, #(#slots: #slot_types),*) {
            unsafe { #callee(#(#args),*) }
        }

        /// Names this kernel in the host-offload image's exports, for the build's check that
        /// every device image defines it (other exported functions are not kernels).
        #[cfg(all(offload_device, not(target_arch = "nvptx64")))]
        #[doc(hidden)]
        #[unsafe(export_name = #marker_symbol)]
        pub static #marker_static: u8 = 0;

        #[cfg(all(offload_device, not(target_arch = "nvptx64")))]
        #[doc(hidden)]
        #[unsafe(export_name = #symbol)]
        pub unsafe extern "C" fn #entry(_dyn_ptr: *mut u8, geometry: u64, #(#slots: #slot_types),*) {
            let body = || unsafe { #callee(#(#args),*) };
            // SAFETY: the host plugin calls the entry within the launch, with its geometry
            // slot; the body rebuilds the arguments from the slots, shared as a GPU's threads
            // share them.
            unsafe { ::offload::__private::run_grid(geometry, body) }
        }
    }
}
