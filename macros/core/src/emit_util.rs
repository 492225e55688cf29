//! Token helpers shared by the kernel and the graph emitters.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

/// `#[doc]` attributes, one per line with a leading space (as `///` comments would give); an
/// empty line stays empty.
pub(crate) fn doc_lines<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) -> TokenStream {
    let lines = lines.into_iter().map(|l| match l.as_ref() {
        "" => String::new(),
        l => format!(" {l}"),
    });
    quote!(#(#[doc = #lines])*)
}

/// [`doc_lines`] of a text (trailing whitespace dropped).
pub(crate) fn doc_attr(text: &str) -> TokenStream {
    doc_lines(text.trim_end().lines())
}

/// An identifier with no span of its own (generated, not written by the user).
pub(crate) fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}
