//! `unsafe(...)` in `#[kernel(...)]`: the promises a kernel author makes, each one word or one
//! `key = "value"`: `unsafe(extents)`, `unsafe(device_fn = "name")`, or both in one group.

use proc_macro2::Span;
use syn::parse::ParseStream;
use syn::{Ident, LitStr, Token};

use super::model::DeviceFn;
use super::naming::is_c_identifier;

/// The promises of one `unsafe(...)` group.
#[derive(Default)]
pub(crate) struct Promises {
    /// The span of `unsafe` when the group holds `extents`.
    pub extents: Option<Span>,
    /// `device_fn = "name"`.
    pub device_fn: Option<DeviceFn>,
}

const PROMISE_HELP: &str = "the promises are `unsafe(extents)` (the kernel accesses each pointer argument only within \
     its declared extent) and `unsafe(device_fn = \"name\")` (the `__device__` function `name(block, blocks, <the \
     kernel's parameters>)` does what the kernel does as block `block` of a grid of `blocks`, docs/kernels.md), alone or together: \
     `unsafe(extents, device_fn = \"name\")`";

/// `unsafe(<promise>, ...)`.
pub(crate) fn parse_promises(input: ParseStream) -> syn::Result<Promises> {
    let unsafe_token: Token![unsafe] = input.parse()?;
    let content;
    syn::parenthesized!(content in input);
    let mut promises = Promises::default();
    if content.is_empty() {
        return Err(syn::Error::new(unsafe_token.span, format!("`unsafe()` promises nothing: {PROMISE_HELP}")));
    }
    while !content.is_empty() {
        let word: Ident = content.parse().map_err(|e| syn::Error::new(e.span(), PROMISE_HELP))?;
        if word == "extents" {
            if promises.extents.replace(unsafe_token.span).is_some() {
                return Err(syn::Error::new(word.span(), "`extents` given twice"));
            }
        } else if word == "device_fn" {
            content.parse::<Token![=]>()?;
            let lit: LitStr = content.parse()?;
            let name = lit.value();
            if !is_c_identifier(&name) {
                return Err(syn::Error::new(
                    lit.span(),
                    format!("`{name}` is not a C identifier: `device_fn` names a `__device__` function of the `.cu`"),
                ));
            }
            if promises.device_fn.replace(DeviceFn { name, span: lit.span() }).is_some() {
                return Err(syn::Error::new(word.span(), "`device_fn` given twice"));
            }
        } else {
            return Err(syn::Error::new(word.span(), format!("unknown promise `{word}`: {PROMISE_HELP}")));
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(promises)
}
