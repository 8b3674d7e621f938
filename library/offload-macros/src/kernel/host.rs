//! The host's side: the kernel as a type and a value, its instances' symbols and launch
//! markers, and the launchers that hand their slots to the library's launch sequence.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens as _, format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::{GenericParam, Ident, ItemFn, WherePredicate};

use offload_abi::intrinsics::LAUNCH_PREFIX;

use super::instances::{Instance, generic_params};
use super::options::{Bounds, Options};
use super::signature::{Param, Shape};

/// The host side: the kernel as a type (`struct NAME<generic parameters>`), whose associated
/// launchers `launch!` and `offload!` call (`<kernels::axpy<f32>>::__offload_launch(..)`), and
/// the trait that gives each instance its symbol and launch marker: a launch of an instance the
/// device images do not hold does not compile.
pub(super) fn host_launcher(
    func: &ItemFn,
    params: &[Param],
    options: &Options,
    instances: &[Instance],
) -> TokenStream {
    let name = &func.sig.ident;
    // A private kernel is launched from the program, outside the kernels module: its host items
    // are the crate's, as the entry point is the program's.
    let vis = match &func.vis {
        syn::Visibility::Inherited => quote!(pub(crate)),
        vis => vis.to_token_stream(),
    };
    let kernel = name.to_string();
    let p = quote!(::offload::__private);
    let instance_trait = format_ident!("__offload_instance_{}", name);

    // The kernel's type and const parameters belong to the kernel's type; its lifetime
    // parameters (and the bounds that name them) to the launchers, as its parameter types, and
    // so the launchers' bounds, may name them.
    let generic = generic_params(func);
    let lifetimes: Vec<&syn::LifetimeParam> = func.sig.generics.lifetimes().collect();
    let names_lifetime = |tokens: &dyn quote::ToTokens| {
        let text = tokens.to_token_stream().to_string();
        lifetimes.iter().any(|l| text.contains(&l.lifetime.to_string()))
    };
    let (launcher_bounds, type_bounds): (Vec<&WherePredicate>, Vec<&WherePredicate>) = func
        .sig
        .generics
        .where_clause
        .iter()
        .flat_map(|w| &w.predicates)
        .partition(|p| matches!(p, WherePredicate::Lifetime(_)) || names_lifetime(p));
    // Each parameter as the kernel's type declares it (`T`, `const N: usize`), as the impl
    // declares it (with the kernel's bounds), and as an argument (`T`, `N`); the type
    // parameters again for the type's marker field.
    let (mut type_params, mut bounded_params, mut type_args, mut phantom) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for p in &generic {
        match p {
            GenericParam::Type(t) => {
                let ident = &t.ident;
                let mut bounded = t.clone();
                bounded.default = None;
                bounded.eq_token = None;
                type_params.push(quote!(#ident));
                bounded_params.push(quote!(#bounded));
                type_args.push(quote!(#ident));
                phantom.push(ident);
            }
            GenericParam::Const(c) => {
                let (ident, ty) = (&c.ident, &c.ty);
                type_params.push(quote!(const #ident: #ty));
                bounded_params.push(quote!(const #ident: #ty));
                type_args.push(quote!(#ident));
            }
            GenericParam::Lifetime(_) => unreachable!("lifetimes are left out"),
        }
    }

    let symbol = quote!(<Self as #instance_trait>::SYMBOL);
    let launcher_where = quote!(where Self: #instance_trait, #(#launcher_bounds,)*);
    let lifetime_params: Vec<TokenStream> = lifetimes.iter().map(|l| quote!(#l)).collect();
    let mut generics = lifetime_params.clone();
    let mut async_generics = generics.clone();
    let mut arg_generics = Vec::new();
    let mut args = Vec::new();
    let mut padding_checks = Vec::new();
    let mut checks = Vec::new();
    let mut devices = Vec::new();
    // Each parameter slot's kind (a constant operand of the marker call), value and size; the
    // geometry slot comes first in the marker alone.
    let mut slots = Vec::new();
    let literal = quote!(::offload::intrinsics::arg_kind::LITERAL);
    for (i, param) in params.iter().enumerate() {
        let ty = format_ident!("A{i}");
        let arg = Ident::new(&format!("a{i}"), Span::call_site());
        let shape = param.param_shape();
        let arg_trait = quote!(::offload::KernelArg::<#shape>);
        generics.push(quote!(#ty: ::offload::KernelArg<#shape>));
        arg_generics.push(quote!(#ty: ::offload::KernelArg<#shape>));
        async_generics.push(quote!(#ty: ::offload::PresentArg<#shape>));
        // Evaluated in the launchers the program calls, so that the compile error of a padded
        // argument (a generic `DeviceCopy` struct instantiated with padding) names the launch.
        padding_checks.push(quote!(const { <#ty as ::offload::KernelArg<#shape>>::NO_PADDING };));
        if let Shape::Region { strategy, .. } = &param.shape {
            // The strategy asked whether the geometry keeps the threads' parts disjoint, for
            // whatever argument reaches a `Region` parameter.
            checks.push(quote!(
                #p::check_partition::<#strategy>(#symbol, #arg_trait::elements(&#arg), geometry)?;
            ));
        }
        devices.push(quote!(#arg_trait::device(&#arg)));
        let kind = quote!(<#ty as ::offload::KernelArg<#shape>>::KIND);
        slots.push((
            kind,
            quote!(#arg_trait::address(&#arg)),
            quote!(#arg_trait::size(&#arg)),
            quote!(#arg_trait::mapped(&#arg)),
        ));
        if let Shape::Slice { .. } | Shape::Region { .. } = param.shape {
            let len = quote!(::core::ptr::without_provenance(#arg_trait::elements(&#arg)));
            slots.push((literal.clone(), len, quote!(8), quote!(0)));
        }
        args.push((ty, arg));
    }
    let (tys, arg_names): (Vec<_>, Vec<_>) = args.into_iter().unzip();
    let (sig, body) = (&func.sig, &func.block);
    let n_slots = slots.len();
    let launch_slots: Vec<TokenStream> = slots
        .iter()
        .map(|(kind, value, size, mapped)| quote!(#p::Slot::new(#kind, #value, #size, #mapped)))
        .collect();
    // The marker's parameters, a triple per slot, the geometry's first; and its arguments in the
    // launch, the kinds constants.
    let (marker_params, marker_names): (Vec<TokenStream>, Vec<TokenStream>) = (0..=n_slots)
        .map(|i| {
            let (k, v, s) = (format_ident!("k{i}"), format_ident!("v{i}"), format_ident!("s{i}"));
            (quote!(#k: i64, #v: *const u8, #s: i64), quote!(#k, #v, #s))
        })
        .unzip();
    // The size the launch's mappers map: the library may have mapped the data already
    // (`Slot::marker_size`); a constant for slots the launch does not map.
    let marker_args: Vec<TokenStream> = slots
        .iter()
        .enumerate()
        .map(|(i, (kind, value, size, _))| quote!(#kind, #value, slots[#i].marker_size(#kind, #size)))
        .collect();
    let marker_args = quote!(#literal, geometry_slot, 8, #(#marker_args),*);
    // A block larger than the kernel's launch bounds would not launch on a GPU (the cubin is
    // built for no more threads), and one longer along an axis than its bound would break what
    // the kernel's code was compiled to assume: refused before anything is copied, everywhere.
    let bounds = match options.launch_bounds {
        None => quote!(::core::option::Option::None),
        Some(bounds) => {
            let reason = match bounds {
                Bounds::Threads(n) => format!(
                    "the kernel's `launch_bounds = {n}` allows blocks of at most {n} threads"
                ),
                Bounds::Axes([x, y, z]) => format!(
                    "the kernel's `launch_bounds` allows blocks of at most {x} x {y} x {z} threads"
                ),
            };
            let (threads, axes) =
                (bounds.threads(), bounds.axes().map(|a| if a == 0 { u32::MAX } else { a }));
            let [ax, ay, az] = axes;
            quote!(::core::option::Option::Some((#threads, [#ax, #ay, #az], #reason)))
        }
    };
    // The two launchers: the library's launch sequence, given the slots and the marker call.
    let launcher = |method: TokenStream, generics: &[TokenStream], asynchronous: bool| {
        quote! {
            #[inline(always)]
            pub fn #method<#(#generics),*>(
                self,
                device: i64,
                grid: impl ::core::convert::Into<::offload::Dim>,
                block: impl ::core::convert::Into<::offload::Dim>,
                shared: impl ::core::convert::Into<::offload::SharedBytes>,
                args: (#(#tys,)*),
            ) -> ::core::result::Result<(), ::offload::Error> #launcher_where {
                let (#(#arg_names,)*) = args;
                #(#padding_checks)*
                let launch = #p::launch(
                    #symbol,
                    device,
                    (grid.into(), block.into(), shared.into()),
                    #bounds,
                    &[#(#devices),*],
                    |geometry| {
                        #(#checks)*
                        ::core::result::Result::Ok(())
                    },
                )?;
                // What the runtime's launch is given of the geometry, taken before the library
                // sees it, so that a launch along x stays constants. (The slot of a launch along
                // y or z holds the address of `shape`, which lives as long as this call.)
                let shape = launch.geometry();
                let (geometry_slot, blocks, threads) = (shape.slot(), shape.blocks(), shape.threads());
                let mut slots = [#(#launch_slots),*];
                // SAFETY: the slots are the kernel's, in order, each made by the argument's
                // `KernelArg` impl (`PresentArg` for an asynchronous launch) and borrowed for
                // the call; the marker is this instance's, given those slots.
                unsafe {
                    match launch.run::<#asynchronous>(&mut slots)? {
                        ::core::option::Option::None => ::core::result::Result::Ok(()),
                        ::core::option::Option::Some(marked) => marked.status(
                            <Self as #instance_trait>::marker(device, blocks, threads, #marker_args),
                        ),
                    }
                }
            }
        }
    };
    let launch_sync = launcher(quote!(__offload_launch), &generics, false);
    let launch_async = launcher(quote!(__offload_launch_async), &async_generics, true);
    let type_where = (!type_bounds.is_empty()).then(|| quote!(where #(#type_bounds,)*));
    // One impl of the instance trait per entry point: its symbol, and its launch marker, which
    // the lowering turns into the runtime's launch of that symbol.
    let instance_impls = instances.iter().map(|instance| {
        let symbol = &instance.symbol;
        let marker = format!("{LAUNCH_PREFIX}{symbol}");
        let generic_args = &instance.args;
        let ty =
            if generic_args.is_empty() { quote!(#name) } else { quote!(#name<#(#generic_args),*>) };
        quote! {
            #[allow(clippy::too_many_arguments)]
            impl #instance_trait for #ty {
                const SYMBOL: &'static str = #symbol;
                #[inline(always)]
                unsafe fn marker(device: i64, grid: i32, block: i32, #(#marker_params),*) -> i32 {
                    unsafe extern "C" {
                        #[link_name = #marker]
                        fn marker(device: i64, grid: i32, block: i32, #(#marker_params),*) -> i32;
                    }
                    // SAFETY: the caller's (the launcher's).
                    unsafe { marker(device, grid, block, #(#marker_names),*) }
                }
            }
        }
    });
    // Each instance type-checked in the host build at its arguments, against the kernel's
    // bounds.
    let instance_checks = instances.iter().filter(|i| !i.args.is_empty()).map(|instance| {
        let generic_args = &instance.args;
        let span = quote!(#(#generic_args),*).span();
        quote_spanned!(span=> let _ = #name::<#(#generic_args),*>;)
    });
    let doc = format!("The kernel `{kernel}`, for `offload::launch!` and `offload::offload!`.");
    let not_listed = format!("kernel `{kernel}` has no instance `{{Self}}` in its device images");
    let listed: Vec<String> = instances
        .iter()
        .map(|i| {
            let a = &i.args;
            quote!(#(#a),*).to_string()
        })
        .collect();
    let note = format!(
        "the instances are those `#[offload::kernel(instances(..))]` lists: {}",
        listed.join("; ")
    );
    let env = offload_abi::kernel::MODULE_ENV;
    let outside = format!(
        "kernel `{kernel}` is outside the kernels module, and the device images hold the kernels \
         of that module alone: move it into src/kernels.rs (or the file `[package.metadata.offload] \
         kernels` names), or a module it declares. (Upstream compiles the whole crate for the \
         device; this build compiles the kernels file alone, so that the program's host code \
         never goes through the GPU's build.)"
    );
    let module_check = quote_spanned! {name.span()=>
        #[cfg(not(offload_device))]
        const _: () = #p::in_kernels_module(
            ::core::module_path!(),
            ::core::option_env!(#env),
            #outside,
        );
    };
    quote! {
        #module_check

        // The kernel's body, type-checked in the host build and never called or emitted: what
        // it uses (the kernels file's own helpers) is used here as in the device images. Its
        // warnings are the device images' builds' to report; `unused` is allowed by name, as a
        // crate's `deny(dead_code)` would outrank `allow(warnings)`.
        #[cfg(not(offload_device))]
        const _: () = {
            #[allow(unused, warnings)]
            #sig #body
            #[allow(unused, warnings)]
            fn __offload_instances() {
                #(#instance_checks)*
            }
        };

        #[cfg(not(offload_device))]
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #name<#(#type_params),*> {
            _kernel: ::core::marker::PhantomData<fn() -> (#(#phantom,)*)>,
        }

        /// The kernel as a value, for `launch!`, `offload!` and `offload::intrinsics::offload`
        /// (a function of the kernel's name, beside its type): a generic kernel's instance is
        /// inferred from the launch's arguments where they name it.
        #[cfg(not(offload_device))]
        #[inline(always)]
        #vis const fn #name<#(#type_params),*>() -> #name<#(#type_args),*> {
            #name { _kernel: ::core::marker::PhantomData }
        }

        #[cfg(not(offload_device))]
        impl<#(#type_params),*> #p::Kernel for #name<#(#type_args),*> {}

        #[cfg(not(offload_device))]
        #[allow(clippy::multiple_bound_locations)]
        impl<#(#lifetime_params,)* #(#bounded_params,)* #(#arg_generics),*> ::offload::Launch<(#(#tys,)*)>
            for #name<#(#type_args),*>
        where Self: #instance_trait, #(#launcher_bounds,)* #(#type_bounds,)*
        {
            #[inline(always)]
            fn launch(
                self,
                device: i64,
                grid: ::offload::Dim,
                block: ::offload::Dim,
                shared: ::offload::SharedBytes,
                args: (#(#tys,)*),
            ) -> ::core::result::Result<(), ::offload::Error> {
                self.__offload_launch(device, grid, block, shared, args)
            }
        }

        #[cfg(not(offload_device))]
        #[doc(hidden)]
        #[allow(non_camel_case_types, clippy::too_many_arguments)]
        #[diagnostic::on_unimplemented(message = #not_listed, note = #note)]
        #vis trait #instance_trait {
            /// The entry point's symbol in every device image.
            const SYMBOL: &'static str;
            /// The launch marker of that symbol.
            ///
            /// # Safety
            /// As the launch marker's: the slots describe borrows that outlive the call.
            unsafe fn marker(device: i64, grid: i32, block: i32, #(#marker_params),*) -> i32;
        }

        #(
            #[cfg(not(offload_device))]
            #instance_impls
        )*

        #[cfg(not(offload_device))]
        // The kernel's lifetimes and their bounds, as it wrote them, in each launcher.
        #[allow(clippy::too_many_arguments, clippy::multiple_bound_locations)]
        impl<#(#bounded_params),*> #name<#(#type_args),*> #type_where {
            #launch_sync
            #launch_async
        }
    }
}
