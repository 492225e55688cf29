//! The `#[kernel]` declarations of a whole Rust file checked as the two attribute macros would
//! check them while the crate compiles, without compiling it (for `kgraph check`): every
//! `#[kernels]` module through [`check_kernels`], every standalone `#[kernel]` outside one
//! through [`check_kernel`], so the messages are the macros' own.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::Attribute;

use super::config::Config;
use super::expand::{check_kernel, check_kernels};
use crate::diagnostics::{Ctxt, Errors, Location};
use crate::syntax::parse::is_kernel_attr;

/// What checking one Rust file found.
#[derive(Debug, Default)]
pub struct SourceCheck {
    /// `#[kernel]` declarations seen (inside `#[kernels]` modules or standalone).
    pub declarations: usize,
    /// Every error, each at a span in the file's text (the text was parsed with span
    /// locations: `SourceMap::render_errors` places them by line and column); empty when every
    /// declaration binds.
    pub errors: Errors,
}

/// What the walk over a file's items has found so far.
struct Found {
    declarations: usize,
    cx: Ctxt,
}

/// Checks every `#[kernel]` declaration of `rust_src`, a Rust file's text, against the `.cu`
/// files `config` finds. `Err`: the file is not valid Rust (a compile error of its own).
pub fn check_rust_source(rust_src: &str, config: &Config) -> Result<SourceCheck, syn::Error> {
    let file = syn::parse_file(rust_src)?;
    let mut found = Found { declarations: 0, cx: Ctxt::new() };
    check_items(&file.items, config, &mut found);
    Ok(SourceCheck { declarations: found.declarations, errors: found.cx.check().err().unwrap_or_default() })
}

fn is_kernels_attr(attr: &Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "kernels")
}

/// The tokens inside an attribute's parentheses (empty for `#[kernels]`), as the compiler
/// hands them to an attribute macro.
fn attr_args(attr: &Attribute) -> TokenStream {
    match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        _ => TokenStream::new(),
    }
}

fn check_items(items: &[syn::Item], config: &Config, found: &mut Found) {
    for item in items {
        match item {
            syn::Item::Mod(m) => check_mod(m, config, found),
            syn::Item::Fn(f) => {
                let rebuild = |attrs| syn::ItemFn { attrs, ..f.clone() }.to_token_stream();
                check_standalone(&f.attrs, rebuild, config, found);
            }
            syn::Item::Verbatim(tokens) => check_verbatim(tokens, config, found),
            _ => {}
        }
    }
}

/// A `#[kernels]` module is checked whole; any other inline module is searched.
fn check_mod(m: &syn::ItemMod, config: &Config, found: &mut Found) {
    let Some(index) = m.attrs.iter().position(is_kernels_attr) else {
        if let Some((_, inner)) = &m.content {
            check_items(inner, config, found);
        }
        return;
    };
    let mut module = m.clone();
    let attr = module.attrs.remove(index);
    found.declarations += count_kernel_items(&module);
    let item_span = module.ident.span();
    let errors = check_kernels(attr_args(&attr), module.to_token_stream(), config);
    push_errors(errors, item_span, found);
}

fn count_kernel_items(module: &syn::ItemMod) -> usize {
    let Some((_, items)) = &module.content else { return 0 };
    items
        .iter()
        .filter(|item| match item {
            syn::Item::Fn(f) => f.attrs.iter().any(is_kernel_attr),
            syn::Item::Verbatim(tokens) => leading_attrs(tokens).iter().any(is_kernel_attr),
            _ => false,
        })
        .count()
}

/// The outer attributes a verbatim item starts with (syn leaves a body-less `fn` verbatim).
fn leading_attrs(tokens: &TokenStream) -> Vec<Attribute> {
    let attrs = |input: ParseStream| {
        let attrs = input.call(Attribute::parse_outer)?;
        let _rest: TokenStream = input.parse()?;
        Ok(attrs)
    };
    attrs.parse2(tokens.clone()).unwrap_or_default()
}

/// A body-less `#[kernel] fn` outside a `#[kernels]` module.
fn check_verbatim(tokens: &TokenStream, config: &Config, found: &mut Found) {
    let split = |input: ParseStream| {
        let attrs = input.call(Attribute::parse_outer)?;
        let rest: TokenStream = input.parse()?;
        Ok((attrs, rest))
    };
    let Ok((attrs, rest)) = split.parse2(tokens.clone()) else { return };
    check_standalone(
        &attrs,
        |attrs| {
            let mut item: TokenStream = attrs.iter().map(ToTokens::to_token_stream).collect();
            item.extend(rest.clone());
            item
        },
        config,
        found,
    );
}

/// An item whose attributes are `attrs`, when one is `#[kernel(...)]`: takes that one off (the
/// compiler hands the macro its arguments and the item without it) and checks the item
/// `rebuild` makes from the remaining attributes.
fn check_standalone(
    attrs: &[Attribute],
    rebuild: impl FnOnce(Vec<Attribute>) -> TokenStream,
    config: &Config,
    found: &mut Found,
) {
    let Some(index) = attrs.iter().position(is_kernel_attr) else { return };
    let mut rest = attrs.to_vec();
    let attr = rest.remove(index);
    let item_span = attr.pound_token.span;
    found.declarations += 1;
    let errors = check_kernel(attr_args(&attr), rebuild(rest), config);
    push_errors(errors, item_span, found);
}

/// One error per message; a message spanned at the call site (which a macro's caller sees at
/// the attribute) is put at `item_span`, so every error has a place in the file.
fn push_errors(checked: Result<(), Errors>, item_span: Span, found: &mut Found) {
    for error in checked.err().unwrap_or_default() {
        let placed = match &error.location {
            Location::Span(span) => span.start().line > 0,
            Location::Tokens(e) => e.span().start().line > 0,
            _ => false,
        };
        if placed {
            found.cx.push(error.location, error.message);
        } else {
            found.cx.push(item_span, error.message);
        }
    }
}
