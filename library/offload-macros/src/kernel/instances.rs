//! A generic kernel's instances: the entry points its device images hold, their symbols, and
//! its types with an instance's arguments substituted.

use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{Error, GenericArgument, GenericParam, Ident, ItemFn, Result, Type};

use super::options::Options;

/// One entry point of the device images: the kernel, or one instance of a generic kernel.
pub(super) struct Instance {
    /// Its symbol in every image: the kernel's name, or `name__ARGS` for an instance.
    pub(super) symbol: String,
    /// The generic arguments (none for a kernel that is not generic).
    pub(super) args: Vec<GenericArgument>,
}

/// The kernel's type and const parameters, which an instance gives arguments for.
pub(super) fn generic_params(func: &ItemFn) -> Vec<&GenericParam> {
    func.sig.generics.params.iter().filter(|p| !matches!(p, GenericParam::Lifetime(_))).collect()
}

/// The entry points a kernel has: itself, or each instance its `instances(..)` lists (one
/// argument per generic parameter, each list told apart by its symbol).
pub(super) fn instances(func: &ItemFn, options: &Options) -> Result<Vec<Instance>> {
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
pub(super) fn instance_symbol(name: &str, args: &[GenericArgument]) -> String {
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
pub(super) fn substitute(func: &ItemFn, instance: &Instance, ty: &Type) -> Type {
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
