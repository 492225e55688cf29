//! Parsing a `#[kernels] mod name { ... }` registry: its kernel declarations (each through
//! [`parse_decl`]) and every other item, kept as written.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::parse::ParseStream;
use syn::{Attribute, Ident, Token, Visibility};

use super::parse::{is_kernel_attr, parse_decl, DeclParse};

/// An item of a `#[kernels]` module: a kernel declaration, or anything else (kept as is).
pub(crate) enum ModItem {
    /// A `#[kernel]` declaration, as far as it parsed.
    Kernel(Box<DeclParse>),
    /// Any other item.
    Other(TokenStream),
}

/// A `#[kernels]` module: its own attributes and header, and its items in order.
pub(crate) struct KernelsMod {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub mod_token: Token![mod],
    pub ident: Ident,
    pub inner_attrs: Vec<Attribute>,
    pub items: Vec<ModItem>,
}

/// The tokens of one kernel declaration: through its `;`, or through a body `{ ... }`.
fn take_decl_tokens(input: ParseStream) -> syn::Result<TokenStream> {
    input.step(|cursor| {
        let mut tokens = TokenStream::new();
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            rest = next;
            let end = match &tt {
                TokenTree::Punct(p) => p.as_char() == ';',
                TokenTree::Group(g) => g.delimiter() == proc_macro2::Delimiter::Brace,
                _ => false,
            };
            tokens.extend([tt]);
            if end {
                break;
            }
        }
        Ok((tokens, rest))
    })
}

/// Parses the module the `#[kernels]` attribute is on.
pub(crate) fn parse_kernels_mod(input: ParseStream) -> syn::Result<KernelsMod> {
    let attrs = input.call(Attribute::parse_outer)?;
    let vis: Visibility = input.parse()?;
    if !input.peek(Token![mod]) {
        return Err(input.error("`#[kernels]` goes on an inline module: `#[kgraph::kernels] mod my_kernels { ... }`"));
    }
    let mod_token: Token![mod] = input.parse()?;
    let ident: Ident = input.parse()?;
    if input.peek(Token![;]) {
        return Err(syn::Error::new(
            ident.span(),
            "`#[kernels]` needs the module inline, `mod name { ... }`, to see its `#[kernel]` declarations",
        ));
    }
    let content;
    syn::braced!(content in input);
    let inner_attrs = content.call(Attribute::parse_inner)?;
    let mut items = Vec::new();
    while !content.is_empty() {
        let ahead = content.fork();
        let is_kernel = ahead.call(Attribute::parse_outer)?.iter().any(is_kernel_attr);
        if is_kernel {
            items.push(ModItem::Kernel(Box::new(parse_decl(take_decl_tokens(&content)?, None))));
        } else {
            let item: syn::Item = content.parse()?;
            items.push(ModItem::Other(item.into_token_stream()));
        }
    }
    Ok(KernelsMod { attrs, vis, mod_token, ident, inner_attrs, items })
}
