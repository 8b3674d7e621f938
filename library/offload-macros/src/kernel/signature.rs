//! A kernel's signature: what it may take and return, and how each parameter is passed.

use proc_macro2::TokenStream;
use quote::{ToTokens as _, format_ident, quote, quote_spanned};
use syn::spanned::Spanned as _;
use syn::visit_mut::VisitMut;
use syn::{Error, FnArg, GenericArgument, Ident, ItemFn, Lifetime, Pat, Result, ReturnType, Type};

use super::instances::{Instance, substitute};

/// How a kernel parameter is passed, decided from its declared type.
pub(super) enum Shape {
    /// `a: T`: one slot holding the bits.
    Value(Type),
    /// `x: &T` / `x: &mut T`: one address slot.
    Ref { elem: Type, mutable: bool },
    /// `x: &[T]` / `x: &mut [T]`: an address slot and a length slot.
    Slice { elem: Type, mutable: bool },
    /// `r: Region<'_, T, S>`: a `&mut [T]` partitioned by strategy `S`, in the same two slots.
    Region { elem: Type, strategy: Box<Type> },
}

/// `Region<'a, T, S>` (under any path): its element type and strategy.
pub(super) fn region_of(ty: &Type) -> Option<(Type, Box<Type>)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if p.qself.is_some() || last.ident != "Region" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return None };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match types[..] {
        [elem, strategy] => Some((elem.clone(), Box::new(strategy.clone()))),
        _ => None,
    }
}

pub(super) struct Param {
    pub(super) name: Ident,
    pub(super) shape: Shape,
    /// The parameter's type as written, for the checks' spans.
    pub(super) ty: Type,
}

pub(super) fn check_signature(func: &ItemFn) -> Result<()> {
    let sig = &func.sig;
    let refuse = |what: &dyn quote::ToTokens, msg: &str| Err(Error::new_spanned(what, msg));
    if let Some(a) = &sig.asyncness {
        return refuse(a, "a kernel cannot be async");
    }
    if let Some(u) = &sig.unsafety {
        return refuse(
            u,
            "a kernel cannot be `unsafe fn`: `launch!` is safe to call, so the kernel must be too \
             (put its unsafe operations in `unsafe {}` blocks, with their safety argument)",
        );
    }
    // Lifetime parameters are erased (one symbol whatever they are), and the launchers take
    // them over; type and const parameters need `instances(..)` (see `instances`).
    if let ReturnType::Type(_, ty) = &sig.output
        && !matches!(&**ty, Type::Tuple(t) if t.elems.is_empty())
    {
        return refuse(ty, "a kernel returns nothing: write results through a `&mut` parameter");
    }
    if let Some(abi) = &sig.abi
        && !abi.name.as_ref().is_some_and(|n| matches!(&*n.value(), "gpu-kernel" | "ptx-kernel"))
    {
        return refuse(
            abi,
            "a kernel is a Rust function (or upstream's `extern \"gpu-kernel\"` one): the \
             device images give it the GPU's kernel ABI, so leave the ABI out",
        );
    }
    if let Some(v) = &sig.variadic {
        return refuse(v, "a kernel cannot be variadic");
    }
    Ok(())
}

/// Upstream's ways of writing a kernel that mean nothing more here, taken out: the
/// `extern "gpu-kernel"` ABI (each device image gives the entry point its own), a `-> ()`, and
/// `#[no_mangle]` (the entry point is already exported under the function's name).
pub(super) fn upstream_forms(func: &mut ItemFn) {
    func.sig.abi = None;
    func.sig.output = ReturnType::Default;
    func.attrs.retain(|a| {
        let no_mangle = |path: &syn::Path| path.is_ident("no_mangle");
        let unsafe_no_mangle = a.path().is_ident("unsafe")
            && a.parse_args_with(syn::Path::parse_mod_style).is_ok_and(|p| no_mangle(&p));
        !no_mangle(a.path()) && !unsafe_no_mangle
    });
}

pub(super) fn param(index: usize, arg: &FnArg) -> Result<Param> {
    let FnArg::Typed(pt) = arg else {
        return Err(Error::new_spanned(arg, "a kernel cannot take `self`"));
    };
    // A parameter the kernel ignores (`_`) still has its slots: they are named here.
    let name = match &*pt.pat {
        Pat::Ident(pi) => pi.ident.clone(),
        Pat::Wild(_) => format_ident!("__offload_unnamed_{index}"),
        pat => {
            return Err(Error::new_spanned(pat, "kernel parameters must be plain names (or `_`)"));
        }
    };
    let shape = match &*pt.ty {
        Type::Reference(r) => {
            let mutable = r.mutability.is_some();
            match &*r.elem {
                Type::Slice(s) => Shape::Slice { elem: (*s.elem).clone(), mutable },
                elem => Shape::Ref { elem: elem.clone(), mutable },
            }
        }
        Type::Ptr(p) => {
            return Err(Error::new_spanned(
                p,
                "a kernel cannot take a raw pointer: the launch could not know what it points to, \
                 so it could neither map the data nor keep the host off it. Take the data by \
                 reference (`&mut [T]`, `&mut T`, `&[T]`), or as an `offload::Region` to give \
                 each thread its own part; the launch passes `&mut x` (or a preloaded guard) \
                 and maps it",
            ));
        }
        ty => match region_of(ty) {
            Some((elem, strategy)) => Shape::Region { elem, strategy },
            None => Shape::Value(ty.clone()),
        },
    };
    if let Shape::Ref { elem, .. } | Shape::Slice { elem, .. } = &shape
        && is_bool_data(elem)
    {
        return Err(Error::new_spanned(
            &pt.ty,
            "a kernel cannot take `bool` data by reference: device data must accept every bit \
             pattern (a kernel or a stale device copy may hand any bytes back), and `bool` does \
             not, so it is not `DeviceCopy`; use `u8` or `u32` (0 for false) instead. A `bool` \
             taken by value is fine: it only goes to the device",
        ));
    }
    Ok(Param { name, shape, ty: (*pt.ty).clone() })
}

/// `bool` or an array of it, as written (a `bool` behind an alias is refused at the launch,
/// by the `DeviceCopy` bound, instead).
pub(super) fn is_bool_data(ty: &Type) -> bool {
    match ty {
        Type::Path(p)
            if p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_none()) =>
        {
            let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            names == ["bool"]
                || names == ["core", "primitive", "bool"]
                || names == ["std", "primitive", "bool"]
        }
        Type::Array(a) => is_bool_data(&a.elem),
        Type::Paren(p) => is_bool_data(&p.elem),
        Type::Group(g) => is_bool_data(&g.elem),
        _ => false,
    }
}

/// Checks of the parameters' types that need the compiler, each error at the parameter: the
/// data behind a `&T`/`&mut T` must be sized (a slice has a length slot only where the signature
/// writes `[T]` out: `&Row` with `type Row = [f32]` would lose it), asked here in the host build
/// and by the device entries in theirs; a value must fit in its 8-byte slot, in every build.
/// Lifetimes do not change either, so the types are checked with each lifetime taken as
/// `'static`; a generic kernel's, once per instance, with its arguments.
pub(super) fn parameter_checks(
    func: &ItemFn,
    params: &[Param],
    instances: &[Instance],
) -> TokenStream {
    let kernel = func.sig.ident.to_string();
    let checks = instances.iter().flat_map(|instance| {
        let kernel = kernel.clone();
        params.iter().filter_map(move |param| {
            let span = param.ty.span();
            let name = param.name.to_string();
            match &param.shape {
                Shape::Ref { elem, .. } => {
                    let elem = with_static_lifetimes(&substitute(func, instance, elem));
                    Some(quote_spanned! {span=>
                        #[cfg(not(offload_device))]
                        const _: () = ::offload::__private::Param::sized::<#elem>();
                    })
                }
                Shape::Value(ty) => {
                    let written = ty.to_token_stream().to_string();
                    let ty = with_static_lifetimes(&substitute(func, instance, ty));
                    let of = if instance.args.is_empty() {
                        String::new()
                    } else {
                        format!(" (instance `{}`)", instance.symbol)
                    };
                    let message = format!(
                        "kernel `{kernel}`{of}: parameter `{name}: {written}` is taken by value, \
                         and a value must fit in the launch's 8-byte slot: take it by reference \
                         (`{name}: &{written}`), which maps it to the device"
                    );
                    Some(quote_spanned! {span=>
                        const _: () = ::core::assert!(::core::mem::size_of::<#ty>() <= 8, "{}", #message);
                    })
                }
                Shape::Slice { .. } | Shape::Region { .. } => None,
            }
        })
    });
    quote! { #(#checks)* }
}

/// `ty` with every lifetime `'static`, so that it can be named outside the kernel's signature.
pub(super) fn with_static_lifetimes(ty: &Type) -> Type {
    struct Static;
    impl VisitMut for Static {
        fn visit_lifetime_mut(&mut self, lifetime: &mut Lifetime) {
            *lifetime = Lifetime::new("'static", lifetime.span());
        }
        fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
            // `&T` without a lifetime needs one in a constant's type.
            if r.lifetime.is_none() {
                r.lifetime = Some(Lifetime::new("'static", r.and_token.span()));
            }
            syn::visit_mut::visit_type_reference_mut(self, r);
        }
    }
    let mut ty = ty.clone();
    Static.visit_type_mut(&mut ty);
    ty
}

impl Param {
    /// The `offload::param` shape naming this parameter in the launcher's bounds.
    pub(super) fn param_shape(&self) -> TokenStream {
        match &self.shape {
            Shape::Value(ty) => quote!(::offload::param::Val<#ty>),
            Shape::Ref { elem, mutable: false } => quote!(::offload::param::Ref<#elem>),
            Shape::Ref { elem, mutable: true } => quote!(::offload::param::Mut<#elem>),
            Shape::Slice { elem, mutable: false } => quote!(::offload::param::Ref<[#elem]>),
            Shape::Slice { elem, mutable: true } => quote!(::offload::param::Mut<[#elem]>),
            Shape::Region { elem, strategy } => quote!(::offload::param::Part<#elem, #strategy>),
        }
    }
}
