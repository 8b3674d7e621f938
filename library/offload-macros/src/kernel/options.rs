//! The kernel attribute's options: `launch_bounds`, `min_blocks`, `fp_contract`, `instances`.

use proc_macro2::TokenStream;
use syn::punctuated::Punctuated;
use syn::{Error, GenericArgument, Result, Token};

/// `launch_bounds = N` (threads per block, any shape) or `launch_bounds = (X, Y)` /
/// `(X, Y, Z)` (each axis).
#[derive(Clone, Copy)]
pub(super) enum Bounds {
    Threads(u32),
    Axes([u32; 3]),
}

impl Bounds {
    pub(super) fn threads(self) -> u32 {
        match self {
            Bounds::Threads(n) => n,
            Bounds::Axes(a) => a.iter().product(),
        }
    }

    pub(super) fn axes(self) -> [u32; 3] {
        match self {
            Bounds::Threads(_) => [0; 3],
            Bounds::Axes(a) => a,
        }
    }

    pub(super) fn parse(value: &syn::Expr) -> Result<Bounds> {
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
pub(super) struct Options {
    /// `launch_bounds = ...`: the largest blocks the kernel is launched with (CUDA's
    /// `__launch_bounds__`), enforced at every launch.
    pub(super) launch_bounds: Option<Bounds>,
    /// `min_blocks = N`: blocks each multiprocessor should hold at once (CUDA's second
    /// `__launch_bounds__` argument): the GPU's compiler keeps the registers within that.
    pub(super) min_blocks: Option<u8>,
    /// `fp_contract`: `a * b + c` may be one fused multiply-add (one rounding).
    pub(super) fp_contract: bool,
    /// `instances(...)`: the generic arguments of each instance a generic kernel's device images
    /// hold, one per generic parameter (types and constants), in order.
    pub(super) instances: Option<Vec<Vec<GenericArgument>>>,
}

/// One instance of `instances(...)`: `(A, B, ..)` for several generic parameters, or one
/// argument alone (a tuple type is written in parentheses of its own: `((f32, f32))`).
pub(super) fn parse_instance(input: syn::parse::ParseStream) -> Result<Vec<GenericArgument>> {
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
    pub(super) fn parse(attr: TokenStream) -> Result<Options> {
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
