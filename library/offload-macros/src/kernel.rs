//! `#[offload::kernel]`: one function, three expansions (nvptx entry, host-offload entry, host
//! launcher). A generic kernel lists the instances its device images hold
//! (`instances(f32, f64)`): each is an entry of its own symbol in every image, and the host's
//! launcher of an instance not listed does not compile.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens as _, format_ident, quote, quote_spanned};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::visit_mut::VisitMut;
use syn::{
    Error, FnArg, GenericArgument, GenericParam, Ident, ItemFn, Lifetime, Pat, Result, ReturnType,
    Token, Type, WherePredicate,
};

use offload_abi::intrinsics::LAUNCH_PREFIX;
use offload_abi::kernel::{ATTR_FP_CONTRACT, ATTR_MIN_BLOCKS_SHIFT, ATTRS_PREFIX, MARKER_PREFIX};

/// `launch_bounds = N` (threads per block, any shape) or `launch_bounds = (X, Y)` /
/// `(X, Y, Z)` (each axis).
#[derive(Clone, Copy)]
enum Bounds {
    Threads(u32),
    Axes([u32; 3]),
}

impl Bounds {
    fn threads(self) -> u32 {
        match self {
            Bounds::Threads(n) => n,
            Bounds::Axes(a) => a.iter().product(),
        }
    }

    fn axes(self) -> [u32; 3] {
        match self {
            Bounds::Threads(_) => [0; 3],
            Bounds::Axes(a) => a,
        }
    }

    fn parse(value: &syn::Expr) -> Result<Bounds> {
        let number = |e: &syn::Expr| -> Result<u32> {
            match e {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse(),
                other => Err(Error::new_spanned(other, "a launch bound is an integer literal")),
            }
        };
        let bounds = match value {
            syn::Expr::Tuple(t) if (2..=3).contains(&t.elems.len()) => {
                let mut axes = [1u32; 3];
                for (axis, e) in axes.iter_mut().zip(&t.elems) {
                    *axis = number(e)?;
                }
                Bounds::Axes(axes)
            }
            syn::Expr::Paren(p) => return Bounds::parse(&p.expr),
            e => Bounds::Threads(number(e)?),
        };
        let axes_ok = bounds.axes() == [0; 3] || {
            let [x, y, z] = bounds.axes();
            (1..=1024).contains(&x) && (1..=1024).contains(&y) && (1..=64).contains(&z)
        };
        if !(1..=1024).contains(&bounds.threads()) || !axes_ok {
            return Err(Error::new_spanned(
                value,
                "`launch_bounds` is the most threads a block of this kernel has, 1 to 1024 in \
                 all: `launch_bounds = 256`, or along each axis, `launch_bounds = (32, 8)` (at \
                 most 64 along z)",
            ));
        }
        Ok(bounds)
    }
}

/// The options of `#[offload::kernel(...)]`.
#[derive(Default)]
struct Options {
    /// `launch_bounds = ...`: the largest blocks the kernel is launched with (CUDA's
    /// `__launch_bounds__`), enforced at every launch.
    launch_bounds: Option<Bounds>,
    /// `min_blocks = N`: blocks each multiprocessor should hold at once (CUDA's second
    /// `__launch_bounds__` argument): the GPU's compiler keeps the registers within that.
    min_blocks: Option<u8>,
    /// `fp_contract`: `a * b + c` may be one fused multiply-add (one rounding).
    fp_contract: bool,
    /// `instances(...)`: the generic arguments of each instance a generic kernel's device images
    /// hold, one per generic parameter (types and constants), in order.
    instances: Option<Vec<Vec<GenericArgument>>>,
}

/// One instance of `instances(...)`: `(A, B, ..)` for several generic parameters, or one
/// argument alone (a tuple type is written in parentheses of its own: `((f32, f32))`).
fn parse_instance(input: syn::parse::ParseStream) -> Result<Vec<GenericArgument>> {
    if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let args = Punctuated::<GenericArgument, Token![,]>::parse_terminated(&content)?;
        Ok(args.into_iter().collect())
    } else {
        Ok(vec![input.parse()?])
    }
}

impl Options {
    fn parse(attr: TokenStream) -> Result<Options> {
        let mut options = Options::default();
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("launch_bounds") {
                if options.launch_bounds.is_some() {
                    return Err(meta.error("`launch_bounds` is given twice"));
                }
                let value: syn::Expr = meta.value()?.parse()?;
                options.launch_bounds = Some(Bounds::parse(&value)?);
                Ok(())
            } else if meta.path.is_ident("instances") {
                if options.instances.is_some() {
                    return Err(meta.error("`instances` is given twice"));
                }
                let content;
                syn::parenthesized!(content in meta.input);
                let list = Punctuated::<Vec<GenericArgument>, Token![,]>::parse_terminated_with(
                    &content,
                    parse_instance,
                )?;
                options.instances = Some(list.into_iter().collect());
                Ok(())
            } else if meta.path.is_ident("min_blocks") {
                if options.min_blocks.is_some() {
                    return Err(meta.error("`min_blocks` is given twice"));
                }
                let value: syn::LitInt = meta.value()?.parse()?;
                let n: u8 = value
                    .base10_parse()
                    .ok()
                    .filter(|&n| (1..=32).contains(&n))
                    .ok_or_else(|| {
                        Error::new_spanned(
                            &value,
                            "`min_blocks` is how many blocks of the kernel a multiprocessor should \
                             hold at once, 1 to 32: `min_blocks = 2`",
                        )
                    })?;
                options.min_blocks = Some(n);
                Ok(())
            } else if meta.path.is_ident("fp_contract") {
                if options.fp_contract {
                    return Err(meta.error("`fp_contract` is given twice"));
                }
                options.fp_contract = true;
                Ok(())
            } else {
                Err(meta.error(
                    "unknown kernel option: #[offload::kernel] takes `launch_bounds = N` (or \
                     `(X, Y)`, `(X, Y, Z)`), `min_blocks = N`, `fp_contract` and, for a generic \
                     kernel, `instances(..)`",
                ))
            }
        });
        syn::parse::Parser::parse2(parser, attr.clone())?;
        if options.min_blocks.is_some() && options.launch_bounds.is_none() {
            return Err(Error::new_spanned(
                attr,
                "`min_blocks` needs `launch_bounds`: the blocks a multiprocessor holds at once \
                 depend on their threads (`launch_bounds = 128, min_blocks = 2`)",
            ));
        }
        Ok(options)
    }
}

/// How a kernel parameter is passed, decided from its declared type.
enum Shape {
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
fn region_of(ty: &Type) -> Option<(Type, Box<Type>)> {
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

struct Param {
    name: Ident,
    shape: Shape,
    /// The parameter's type as written, for the checks' spans.
    ty: Type,
}

/// One entry point of the device images: the kernel, or one instance of a generic kernel.
struct Instance {
    /// Its symbol in every image: the kernel's name, or `name__ARGS` for an instance.
    symbol: String,
    /// The generic arguments (none for a kernel that is not generic).
    args: Vec<GenericArgument>,
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let options = Options::parse(attr)?;
    let mut func: ItemFn = syn::parse2(item)?;
    check_signature(&func)?;
    upstream_forms(&mut func);
    let instances = instances(&func, &options)?;
    let params =
        func.sig.inputs.iter().enumerate().map(|(i, a)| param(i, a)).collect::<Result<Vec<_>>>()?;
    let checks = parameter_checks(&func, &params, &instances);
    let device = instances.iter().map(|i| device_entry(&func, &params, &options, i));
    let host = host_launcher(&func, &params, &options, &instances);
    let body = device_body(&func);
    Ok(quote! { #checks #body #(#device)* #host })
}

/// The kernel's type and const parameters, which an instance gives arguments for.
fn generic_params(func: &ItemFn) -> Vec<&GenericParam> {
    func.sig.generics.params.iter().filter(|p| !matches!(p, GenericParam::Lifetime(_))).collect()
}

/// The entry points a kernel has: itself, or each instance its `instances(..)` lists (one
/// argument per generic parameter, each list told apart by its symbol).
fn instances(func: &ItemFn, options: &Options) -> Result<Vec<Instance>> {
    let name = func.sig.ident.to_string();
    let generic = generic_params(func);
    let Some(list) = &options.instances else {
        if let Some(p) = generic.first() {
            return Err(Error::new_spanned(
                p,
                "a generic kernel lists the instances its device images hold: \
                 `#[offload::kernel(instances(f32, f64))]`, one argument per type or const \
                 parameter, in parentheses when there are several (`instances((f32, 16), (f64, \
                 32))`); the device images are built before the program that launches them",
            ));
        }
        return Ok(vec![Instance { symbol: name, args: Vec::new() }]);
    };
    if generic.is_empty() {
        return Err(Error::new_spanned(
            &func.sig.ident,
            "`instances(..)` is for generic kernels: this one has no type or const parameter",
        ));
    }
    if list.is_empty() {
        return Err(Error::new_spanned(&func.sig.ident, "`instances(..)` lists no instance"));
    }
    let mut out: Vec<Instance> = Vec::new();
    for args in list {
        let tokens = quote!(#(#args),*);
        if args.len() != generic.len() {
            return Err(Error::new_spanned(
                &tokens,
                format!(
                    "kernel `{name}` has {} type and const parameters: an instance gives one \
                     argument for each, in order",
                    generic.len()
                ),
            ));
        }
        let symbol = instance_symbol(&name, args);
        if out.iter().any(|i| i.symbol == symbol) {
            return Err(Error::new_spanned(
                &tokens,
                format!("this instance is listed twice (its symbol is `{symbol}`)"),
            ));
        }
        out.push(Instance { symbol, args: args.clone() });
    }
    Ok(out)
}

/// `name__ARGS`: the arguments' tokens with every run of other characters than ASCII letters
/// and digits made one `_` (a PTX identifier): `axpy::<f32>` is `axpy__f32`, `(f32, 16)`
/// `..__f32_16`.
fn instance_symbol(name: &str, args: &[GenericArgument]) -> String {
    let text = quote!(#(#args),*).to_string();
    let mut symbol = format!("{name}__");
    let mut gap = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if gap && !symbol.ends_with('_') {
                symbol.push('_');
            }
            symbol.push(c);
            gap = false;
        } else {
            gap = true;
        }
    }
    symbol
}

/// `ty` with the kernel's generic parameters replaced by an instance's arguments.
fn substitute(func: &ItemFn, instance: &Instance, ty: &Type) -> Type {
    struct Substitute<'a> {
        types: Vec<(&'a Ident, &'a GenericArgument)>,
        consts: Vec<(&'a Ident, &'a GenericArgument)>,
    }
    impl VisitMut for Substitute<'_> {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            if let Type::Path(p) = ty
                && p.qself.is_none()
                && let Some(ident) = p.path.get_ident()
                && let Some((_, GenericArgument::Type(arg))) =
                    self.types.iter().find(|(param, _)| *param == ident)
            {
                *ty = arg.clone();
                return;
            }
            syn::visit_mut::visit_type_mut(self, ty);
        }
        fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
            if let syn::Expr::Path(p) = expr
                && p.qself.is_none()
                && let Some(ident) = p.path.get_ident()
                && let Some((_, arg)) = self.consts.iter().find(|(param, _)| *param == ident)
            {
                *expr = syn::parse_quote!({ #arg });
                return;
            }
            syn::visit_mut::visit_expr_mut(self, expr);
        }
    }
    let mut sub = Substitute { types: Vec::new(), consts: Vec::new() };
    for (param, arg) in generic_params(func).into_iter().zip(&instance.args) {
        match param {
            GenericParam::Type(t) => sub.types.push((&t.ident, arg)),
            GenericParam::Const(c) => sub.consts.push((&c.ident, arg)),
            GenericParam::Lifetime(_) => {}
        }
    }
    let mut ty = ty.clone();
    sub.visit_type_mut(&mut ty);
    ty
}

fn check_signature(func: &ItemFn) -> Result<()> {
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
fn upstream_forms(func: &mut ItemFn) {
    func.sig.abi = None;
    func.sig.output = ReturnType::Default;
    func.attrs.retain(|a| {
        let no_mangle = |path: &syn::Path| path.is_ident("no_mangle");
        let unsafe_no_mangle = a.path().is_ident("unsafe")
            && a.parse_args_with(syn::Path::parse_mod_style).is_ok_and(|p| no_mangle(&p));
        !no_mangle(a.path()) && !unsafe_no_mangle
    });
}

fn param(index: usize, arg: &FnArg) -> Result<Param> {
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
fn is_bool_data(ty: &Type) -> bool {
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
fn parameter_checks(func: &ItemFn, params: &[Param], instances: &[Instance]) -> TokenStream {
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
fn with_static_lifetimes(ty: &Type) -> Type {
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
    /// The slot parameters of the entry point (name and type), and the expression rebuilding
    /// the argument. Address slots are typed as pointers, so the nvptx backend knows them for
    /// global memory (`ld.global`, not generic loads); literal slots are `u64`. The rebuilt
    /// argument's type is inferred from the kernel's parameter: written out, it could name the
    /// kernel's lifetime parameters, which the entry point does not have.
    fn device_slots(&self) -> (Vec<(Ident, TokenStream)>, TokenStream) {
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

    /// The `offload::param` shape naming this parameter in the launcher's bounds.
    fn param_shape(&self) -> TokenStream {
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

/// The kernel's own body in the device images, always inlined into its entry points (an
/// `#[inline]` of the user's would be a second, conflicting one).
fn device_body(func: &ItemFn) -> TokenStream {
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
fn device_entry(
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

/// The host side: the kernel as a type (`struct NAME<generic parameters>`), whose associated
/// launchers `launch!` and `offload!` call (`<kernels::axpy<f32>>::__offload_launch(..)`), and
/// the trait that gives each instance its symbol and launch marker: a launch of an instance the
/// device images do not hold does not compile.
fn host_launcher(
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
        checks.push(quote!(#arg_trait::check_launch(&#arg, #symbol, geometry)?;));
        devices.push(quote!(#arg_trait::device(&#arg)));
        let kind = quote!(<#ty as ::offload::KernelArg<#shape>>::KIND);
        slots.push((kind, quote!(#arg_trait::address(&#arg)), quote!(#arg_trait::size(&#arg))));
        if let Shape::Slice { .. } | Shape::Region { .. } = param.shape {
            let len = quote!(::core::ptr::without_provenance(#arg_trait::elements(&#arg)));
            slots.push((literal.clone(), len, quote!(8)));
        }
        args.push((ty, arg));
    }
    let (tys, arg_names): (Vec<_>, Vec<_>) = args.into_iter().unzip();
    let (sig, body) = (&func.sig, &func.block);
    let n_slots = slots.len();
    let launch_slots: Vec<TokenStream> = slots
        .iter()
        .map(|(kind, value, size)| quote!(#p::Slot::new(#kind, #value, #size)))
        .collect();
    // The marker's parameters, a triple per slot, the geometry's first; and its arguments in the
    // launch, the kinds constants.
    let marker_params: Vec<TokenStream> = (0..=n_slots)
        .map(|i| {
            let (k, v, s) = (format_ident!("k{i}"), format_ident!("v{i}"), format_ident!("s{i}"));
            quote!(#k: i64, #v: *const u8, #s: i64)
        })
        .collect();
    let marker_names: Vec<TokenStream> = (0..=n_slots)
        .map(|i| {
            let (k, v, s) = (format_ident!("k{i}"), format_ident!("v{i}"), format_ident!("s{i}"));
            quote!(#k, #v, #s)
        })
        .collect();
    // The size the launch's mappers map: the library may have mapped the data already
    // (`Slot::marker_size`); a constant for slots the launch does not map.
    let marker_args: Vec<TokenStream> = slots
        .iter()
        .enumerate()
        .map(|(i, (kind, value, size))| quote!(#kind, #value, slots[#i].marker_size(#kind, #size)))
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
                let shape = launch.geometry;
                let (geometry_slot, blocks, threads) =
                    (shape.slot(), launch.geometry.blocks(), launch.geometry.threads());
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
                    // SAFETY: the caller's (`__offload_run`'s).
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
