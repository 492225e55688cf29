//! Finding `#[kernel]` declarations in a Rust file's text, for generators that need them
//! without expanding anything (the graph-spec generator).

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{ParseStream, Parser};
use syn::Attribute;

use super::model::KernelDecl;
use super::parse::{is_kernel_attr, parse_decl};

/// Finds every `#[kernel(...)]` declaration in a Rust file's text, at top level or in inline
/// modules, without reading any `.cu` file.
pub fn decls_from_source(rust_src: &str) -> Result<Vec<KernelDecl>, Vec<syn::Error>> {
    let file = syn::parse_file(rust_src).map_err(|e| vec![e])?;
    let mut decls = Vec::new();
    let mut errors = Vec::new();
    collect_decls(&file.items, &mut decls, &mut errors);
    if errors.is_empty() {
        Ok(decls)
    } else {
        Err(errors)
    }
}

fn collect_decls(items: &[syn::Item], decls: &mut Vec<KernelDecl>, errors: &mut Vec<syn::Error>) {
    for item in items {
        let tokens = match item {
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect_decls(inner, decls, errors);
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
            Some(decl) => decls.push(decl),
            None => errors.extend(parsed.errors),
        }
    }
}
