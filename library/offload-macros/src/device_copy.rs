//! `#[derive(DeviceCopy)]`: plain data with a layout the device shares.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Result};

pub(crate) fn expand(item: TokenStream) -> Result<TokenStream> {
    let input: DeriveInput = syn::parse2(item)?;
    let Data::Struct(data) = &input.data else {
        return Err(Error::new_spanned(&input.ident, "DeviceCopy can only be derived for structs"));
    };
    if !has_stable_layout(&input) {
        return Err(Error::new_spanned(
            &input.ident,
            "DeviceCopy needs `#[repr(C)]` or `#[repr(transparent)]`: the host and the device \
             must agree on the layout",
        ));
    }
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    if input.generics.params.is_empty() {
        // Each field checked on its own, so an error points at the field that is not plain
        // data instead of at the derive.
        let checks = data.fields.iter().map(|f| {
            let ty = &f.ty;
            quote_spanned!(ty.span()=> __offload_assert_device_copy::<#ty>();)
        });
        let copy_check = quote_spanned!(name.span()=> __offload_assert_copy::<#name>(););
        // No padding: padding bytes are uninitialised, and a device copy or a kernel's slot
        // reads every byte.
        let field_types = data.fields.iter().map(|f| &f.ty);
        let padding_check = quote_spanned!(name.span()=>
            const _: () = ::core::assert!(
                ::core::mem::size_of::<#name>() == 0 #(+ ::core::mem::size_of::<#field_types>())*,
                "DeviceCopy types cannot have padding: reorder the fields or add explicit padding fields"
            );
        );
        return Ok(quote! {
            #padding_check
            const _: () = {
                fn __offload_assert_device_copy<T: ?::core::marker::Sized + ::offload::DeviceCopy>() {}
                fn __offload_assert_copy<T: ::core::marker::Copy>() {}
                fn __offload_check() {
                    #(#checks)*
                    #copy_check
                }
            };
            unsafe impl ::offload::DeviceCopy for #name {}
        });
    }
    // A generic struct is plain data exactly when its fields are, for the parameters given.
    let mut predicates =
        where_clause.map(|w| w.predicates.iter().cloned().collect()).unwrap_or_else(Vec::new);
    for field in &data.fields {
        let ty = &field.ty;
        predicates.push(syn::parse_quote!(#ty: ::offload::DeviceCopy));
    }
    Ok(quote! {
        unsafe impl #impl_generics ::offload::DeviceCopy for #name #ty_generics
        where
            Self: ::core::marker::Copy,
            #(#predicates,)*
        {}
    })
}

fn has_stable_layout(input: &DeriveInput) -> bool {
    input.attrs.iter().filter(|a| a.path().is_ident("repr")).any(|a| {
        let mut stable = false;
        let _ = a.parse_nested_meta(|m| {
            stable |= m.path.is_ident("C") || m.path.is_ident("transparent");
            Ok(())
        });
        stable
    })
}
