//! `#[offload::kernel]`: one function, three expansions (nvptx entry, host-offload entry, host
//! launcher). A generic kernel lists the instances its device images hold
//! (`instances(f32, f64)`): each is an entry of its own symbol in every image, and the host's
//! launcher of an instance not listed does not compile.

//!
//! - `options`: the attribute's options;
//! - `signature`: what a kernel may take, and how each parameter is passed;
//! - `instances`: a generic kernel's entry points;
//! - `entries`: the kernel's body and entry points in the device images;
//! - `host`: the kernel's type, its instances' markers, and its launchers.

mod entries;
mod host;
mod instances;
mod options;
mod signature;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{ItemFn, Result};

use entries::{device_body, device_entry};
use host::host_launcher;
use instances::instances;
use options::Options;
use signature::{check_signature, param, parameter_checks, upstream_forms};

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
