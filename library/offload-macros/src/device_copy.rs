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
    let field_types: Vec<&syn::Type> = data.fields.iter().map(|f| &f.ty).collect();
    // The fields' bytes together, written without a `0 +` that clippy's `identity_op` would
    // flag in the user's crate (the sum carries the struct's span).
    let field_bytes = if field_types.is_empty() {
        quote!(0)
    } else {
        quote!(#(::core::mem::size_of::<#field_types>())+*)
    };
    if input.generics.params.is_empty() {
        // Each field checked on its own, so an error points at the field that is not plain
        // data instead of at the derive.
        let checks = field_types
            .iter()
            .map(|ty| quote_spanned!(ty.span()=> __offload_assert_device_copy::<#ty>();));
        let copy_check = quote_spanned!(name.span()=> __offload_assert_copy::<#name>(););
        // No padding: padding bytes are uninitialised, and a device copy or a kernel's slot
        // reads every byte.
        let padding_check = quote_spanned!(name.span()=>
            const _: () = ::core::assert!(
                ::core::mem::size_of::<#name>() == #field_bytes,
                "DeviceCopy types cannot have padding: reorder the fields or add explicit padding fields"
            );
        );
        return Ok(quote! {
            #padding_check
            const _: () = {
                const fn __offload_assert_device_copy<T: ?::core::marker::Sized + ::offload::DeviceCopy>() {
                    // A field of a generic `DeviceCopy` type (`Pair<u8, u64>`) can have padding
                    // inside it, which the sizes above do not see: its own check says.
                    <T as ::offload::DeviceCopy>::NO_PADDING
                }
                const fn __offload_assert_copy<T: ::core::marker::Copy>() {}
                // Evaluated here, with the struct: the field types are concrete.
                const __OFFLOAD_FIELDS: () = {
                    #(#checks)*
                    #copy_check
                };
                const _: () = __OFFLOAD_FIELDS;
                unsafe impl ::offload::DeviceCopy for #name {
                    // The struct's own padding is checked above, where it is defined.
                    const NO_PADDING: () = __OFFLOAD_FIELDS;
                }
            };
        });
    }
    // A generic struct is plain data exactly when its fields are, for the parameters given.
    let mut predicates =
        where_clause.map(|w| w.predicates.iter().cloned().collect()).unwrap_or_else(Vec::new);
    for ty in &field_types {
        predicates.push(syn::parse_quote!(#ty: ::offload::DeviceCopy));
    }
    // Its padding depends on the parameters too (`Pair<u8, u64>` has 7 bytes of it, `Pair<u32,
    // f32>` none), so it is checked for each instantiation: `NO_PADDING` is evaluated by every
    // library function that copies a `DeviceCopy` type (preloads, kernel arguments,
    // `HostBuffer`), for the type it is given, when the program is compiled.
    let message = format!(
        "DeviceCopy types cannot have padding: `{name}` has padding with these type arguments \
         (see the instantiation below); reorder the fields or add explicit padding fields"
    );
    let padding_check = quote_spanned!(name.span()=>
        ::core::assert!(
            ::core::mem::size_of::<Self>() == #field_bytes,
            #message
        );
    );
    Ok(quote! {
        unsafe impl #impl_generics ::offload::DeviceCopy for #name #ty_generics
        where
            Self: ::core::marker::Copy,
            #(#predicates,)*
        {
            const NO_PADDING: () = {
                #(<#field_types as ::offload::DeviceCopy>::NO_PADDING;)*
                #padding_check
            };
        }
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

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn the_padding_check_sums_the_fields_without_a_zero_term() {
        // `0 + ...` carries the struct's span: clippy's `identity_op` flags it in the user's crate.
        let two = super::expand(quote!(
            #[repr(C)]
            struct P {
                x: f32,
                v: u32,
            }
        ))
        .unwrap()
        .to_string();
        assert!(two.contains("size_of :: < f32 > () + :: core :: mem :: size_of :: < u32 > ()"));
        assert!(!two.contains("0 +"), "{two}");
        let none = super::expand(quote!(
            #[repr(C)]
            struct E {}
        ))
        .unwrap()
        .to_string();
        assert!(none.contains("== 0"), "{none}");
    }
}
