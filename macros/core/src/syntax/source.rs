//! Finding `#[kernel]` declarations in a Rust file's text, for generators that need them
//! without expanding anything (the graph-spec generator).

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{ParseStream, Parser};
use syn::Attribute;

use super::model::KernelDecl;
use super::naming::ident_text;
use super::parse::{is_kernel_attr, parse_decl};
use crate::diagnostics::{Ctxt, Errors};

/// Finds every `#[kernel(...)]` declaration in a Rust file's text, at top level or in inline
/// modules, without reading any `.cu` file.
pub fn decls_from_source(rust_src: &str) -> Result<Vec<KernelDecl>, Errors> {
    Ok(decls_with_modules(rust_src)?.into_iter().map(|d| d.decl).collect())
}

/// A declaration found in a Rust file, with where in the file it is.
#[derive(Debug, Clone)]
pub struct SourceDecl {
    /// The declaration.
    pub decl: KernelDecl,
    /// The inline modules it is declared in, outermost first (empty: the file's top level).
    pub modules: Vec<String>,
}

/// Like [`decls_from_source`], with the inline module path of each declaration.
pub fn decls_with_modules(rust_src: &str) -> Result<Vec<SourceDecl>, Errors> {
    let mut cx = Ctxt::new();
    let mut decls = Vec::new();
    match syn::parse_file(rust_src) {
        Ok(file) => collect_decls(&file.items, &mut Vec::new(), &mut decls, &mut cx),
        Err(e) => cx.push_syn(e),
    }
    cx.check().map(|()| decls)
}

/// Every declaration of `items` (inline modules included) to `decls`, every error to `cx`.
fn collect_decls(items: &[syn::Item], modules: &mut Vec<String>, decls: &mut Vec<SourceDecl>, cx: &mut Ctxt) {
    for item in items {
        let tokens = match item {
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    modules.push(ident_text(&m.ident));
                    collect_decls(inner, modules, decls, cx);
                    modules.pop();
                }
                continue;
            }
            syn::Item::Fn(f) if f.attrs.iter().any(is_kernel_attr) => quote!(#f),
            syn::Item::Verbatim(tokens) => {
                // A body-less `fn` (what syn leaves verbatim): look at its leading attributes.
                let leading_kernel_attr = |input: ParseStream| {
                    let attrs = input.call(Attribute::parse_outer)?;
                    let _rest: TokenStream = input.parse()?;
                    Ok(attrs.iter().any(is_kernel_attr))
                };
                let has_kernel_attr = leading_kernel_attr.parse2(tokens.clone()).unwrap_or(false);
                if !has_kernel_attr {
                    continue;
                }
                tokens.clone()
            }
            _ => continue,
        };
        let parsed = parse_decl(tokens, None);
        match parsed.to_decl() {
            Some(decl) => decls.push(SourceDecl { decl, modules: modules.clone() }),
            None => cx.extend(parsed.errors),
        }
    }
}
