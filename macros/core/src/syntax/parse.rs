//! Parsing `#[kernel("file.cu")] pub fn name(a: &[f32], n: i32);` into the typed model.
//!
//! A body-less `fn` is not a `syn::ItemFn` (syn hands it over as `Item::Verbatim`), so the
//! declaration grammar is parsed here directly. Parsing never stops at the first problem: every
//! error of one declaration is collected, and what did parse is kept for a stub. The attribute's
//! options are parsed in `args`.

mod args;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, Token, Type, Visibility};

use super::extent::extent_from_expr;
use super::model::{Extent, KernelDecl, Param, ParamKind};
use super::naming::ident_text;
use super::text::tidy_tokens;
use super::types::{classify_nullable, classify_type, optional_pointee};
use crate::diagnostics::{Ctxt, Errors};
pub use args::KernelArgs;
use args::{kernel_attr_tokens, parse_kernel_args, ARGS_HELP};

/// Parameter names the generated `launch(&self, stream, cfg, ...)` and
/// `launch_with(&self, stream, cfg, opts, ...)` use themselves.
pub(crate) const RESERVED_PARAMS: [&str; 3] = ["stream", "cfg", "opts"];

/// One parameter as far as it parsed (`kind` is `None` when its type is not supported).
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct ParsedParam {
    /// The parameter's name.
    pub name: Ident,
    /// Its type as written.
    pub ty: Type,
    /// How it is passed, when the type is supported.
    pub kind: Option<ParamKind>,
    /// Its extent (`n` in `&[f32; n]`), when one is declared and reads.
    pub extent: Option<Extent>,
    /// Declared `Option<&[T; n]>` / `Option<&mut [T; n]>`: the kernel accepts NULL here.
    pub nullable: bool,
}

/// A declaration as far as it parsed, with every error found on the way.
#[derive(Debug)]
#[doc(hidden)]
pub struct DeclParse {
    /// Attributes other than `#[kernel]` (doc comments, `cfg`s), kept on what is generated.
    pub attrs: Vec<Attribute>,
    /// The declaration's visibility.
    pub vis: Visibility,
    /// The fn name, once parsed.
    pub name: Option<Ident>,
    /// The `#[kernel(...)]` arguments, once parsed.
    pub args: Option<KernelArgs>,
    /// The parameters, as far as they parsed.
    pub params: Vec<ParsedParam>,
    /// Span of the parenthesized parameter list.
    pub params_span: Span,
    /// Every error found, in the order found (empty when it parsed).
    pub errors: Errors,
}

impl DeclParse {
    /// The complete declaration, or `None` when anything failed to parse.
    pub fn to_decl(&self) -> Option<KernelDecl> {
        if !self.errors.is_empty() {
            return None;
        }
        let name = self.name.clone()?;
        let args = self.args.clone()?;
        let params = self
            .params
            .iter()
            .map(|p| {
                Some(Param {
                    name: p.name.clone(),
                    kind: p.kind?,
                    ty: p.ty.clone(),
                    extent: p.extent.clone(),
                    span: p.name.span().join(p.ty.span()).unwrap_or_else(|| p.name.span()),
                    rename: args.renames.iter().find(|r| ident_text(&r.rust) == ident_text(&p.name)).cloned(),
                    nullable: p.nullable,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let (symbol, symbol_span) = match args.symbol {
            Some((symbol, span)) => (symbol, span),
            None => (ident_text(&name), name.span()),
        };
        Some(KernelDecl {
            name,
            symbol,
            file: args.file,
            params,
            vis: self.vis.clone(),
            attrs: self.attrs.clone(),
            file_span: args.file_span,
            symbol_span,
            params_span: self.params_span,
            extents_promise: args.extents_promise,
            device_fn: args.device_fn,
            shared: args.shared,
            max_block: args.max_block,
            requires: args.requires,
            align: args.align,
        })
    }
}

/// True for `#[kernel(...)]`, `#[kgraph::kernel(...)]` and the like.
pub(crate) fn is_kernel_attr(attr: &Attribute) -> bool {
    attr.path().segments.last().is_some_and(|s| s.ident == "kernel")
}

/// Parses one declaration. `outer` is the standalone attribute's arguments (`#[kernel(...)]`
/// already stripped by the compiler); inside a registry it is `None` and the attribute is
/// among the item's own.
#[doc(hidden)]
pub fn parse_decl(item: TokenStream, outer: Option<(TokenStream, Span)>) -> DeclParse {
    let mut st = DeclParse {
        attrs: Vec::new(),
        vis: Visibility::Inherited,
        name: None,
        args: None,
        params: Vec::new(),
        params_span: Span::call_site(),
        errors: Errors::default(),
    };
    // The declaration's own collector: what it finds travels with the declaration (a
    // `#[kernels]` module is parsed whole before its declarations are checked, in order).
    let mut cx = Ctxt::new();
    let mut kernel_attr_seen = false;
    if let Some((tokens, span)) = outer {
        kernel_attr_seen = true;
        match parse_kernel_args(tokens, span) {
            Ok(args) => st.args = Some(args),
            Err(e) => cx.push_syn(e),
        }
    }
    let item_span = item.clone().into_iter().next().map_or_else(Span::call_site, |t| t.span());
    let result = (|input: ParseStream| parse_decl_body(input, &mut st, &mut kernel_attr_seen, &mut cx)).parse2(item);
    if let Err(e) = result {
        cx.push_syn(e);
    }
    if !kernel_attr_seen {
        cx.push(item_span, format!("missing `#[kernel(...)]`: {ARGS_HELP}"));
    }
    check_renames(&st, &mut cx);
    st.errors = cx.check().err().unwrap_or_default();
    st
}

/// A `rename(x = ...)` whose `x` is no parameter of the declaration.
fn check_renames(st: &DeclParse, cx: &mut Ctxt) {
    let Some(args) = &st.args else { return };
    for r in args.renames.iter().filter(|r| !st.params.iter().any(|p| ident_text(&p.name) == ident_text(&r.rust))) {
        let names: Vec<String> = st.params.iter().map(|p| format!("`{}`", ident_text(&p.name))).collect();
        cx.push(
            r.span,
            format!(
                "`rename({} = {})`: the declaration has no parameter `{}` (it has {}); `rename` takes the Rust \
                     parameter's name, then the `.cu`'s",
                ident_text(&r.rust),
                r.cu,
                ident_text(&r.rust),
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            ),
        );
    }
}

fn parse_decl_body(
    input: ParseStream,
    st: &mut DeclParse,
    kernel_attr_seen: &mut bool,
    cx: &mut Ctxt,
) -> syn::Result<()> {
    for attr in input.call(Attribute::parse_outer)? {
        if !is_kernel_attr(&attr) {
            st.attrs.push(attr);
            continue;
        }
        if *kernel_attr_seen {
            cx.push_spanned(&attr, "more than one `#[kernel]` on this declaration");
            continue;
        }
        *kernel_attr_seen = true;
        let args = kernel_attr_tokens(&attr).and_then(|tokens| match tokens.is_empty() {
            true => Err(syn::Error::new_spanned(&attr, format!("missing the kernel's `.cu` file: {ARGS_HELP}"))),
            false => parse_kernel_args(tokens, attr.span()),
        });
        match args {
            Ok(args) => st.args = Some(args),
            Err(e) => cx.push_syn(e),
        }
    }
    st.vis = input.parse()?;
    reject_qualifiers(input, cx)?;
    if !input.peek(Token![fn]) {
        return Err(input.error(
            "expected `fn`: `#[kernel]` goes on a body-less function declaration such as \
             `pub fn my_kernel(x: &[f32], n: i32);`",
        ));
    }
    input.parse::<Token![fn]>()?;
    let name: Ident = input.parse()?;
    st.name = Some(name);
    let mut generic_names = Vec::new();
    if input.peek(Token![<]) {
        let generics: syn::Generics = input.parse()?;
        generic_names = generics.type_params().map(|t| t.ident.to_string()).collect();
        cx.push_spanned(
            generics,
            "a kernel declaration cannot be generic: the `.cu` kernel has one concrete signature \
             (declare one `#[kernel]` per instantiation, with `name = \"symbol\"`)",
        );
    }
    let content;
    let paren = syn::parenthesized!(content in input);
    st.params_span = paren.span.join();
    parse_params(&content, st, &generic_names, cx);
    reject_after_params(input, cx)
}

/// After the parameter list: no return type, no `where` clause, no body (an empty `{}` is
/// tolerated), then `;` and nothing more.
fn reject_after_params(input: ParseStream, cx: &mut Ctxt) -> syn::Result<()> {
    if input.peek(Token![->]) {
        let ret: syn::ReturnType = input.parse()?;
        cx.push_spanned(
            ret,
            "a kernel returns nothing: remove the return type and declare outputs as `&mut [T]` parameters",
        );
    }
    if input.peek(Token![where]) {
        let clause: syn::WhereClause = input.parse()?;
        cx.push_spanned(clause, "a kernel declaration takes no `where` clause");
    }
    if input.peek(syn::token::Brace) {
        let body;
        let brace = syn::braced!(body in input);
        if !body.is_empty() {
            let _ignored_body: TokenStream = body.parse()?;
            cx.push(
                brace.span.join(),
                "a kernel declaration has no body (the kernel is the `.cu` code): end it with `;`",
            );
        }
    } else {
        input.parse::<Token![;]>().map_err(|e| syn::Error::new(e.span(), "expected `;` after the declaration"))?;
    }
    if !input.is_empty() {
        return Err(input.error("unexpected tokens after the kernel declaration"));
    }
    Ok(())
}

fn reject_qualifiers(input: ParseStream, cx: &mut Ctxt) -> syn::Result<()> {
    loop {
        let word = if input.peek(Token![const]) {
            input.parse::<Token![const]>()?.into_token_stream()
        } else if input.peek(Token![async]) {
            input.parse::<Token![async]>()?.into_token_stream()
        } else if input.peek(Token![unsafe]) {
            input.parse::<Token![unsafe]>()?.into_token_stream()
        } else if input.peek(Token![extern]) {
            let abi: syn::Abi = input.parse()?;
            abi.into_token_stream()
        } else {
            return Ok(());
        };
        cx.push_spanned(&word, format!("a kernel declaration is a plain `fn`: remove `{}`", tidy_tokens(&word)));
    }
}

/// Parses the parameter list; a type naming one of `generic_names` is not reported again
/// (the generics already are).
fn parse_params(input: ParseStream, st: &mut DeclParse, generic_names: &[String], cx: &mut Ctxt) {
    while !input.is_empty() {
        let start = input.fork();
        match parse_param(input) {
            Ok(p) => {
                if let Some(kind_err) = p.1 {
                    if !mentions_any(p.0.ty.to_token_stream(), generic_names) {
                        cx.push_syn(kind_err);
                    }
                }
                let param = p.0;
                let text = ident_text(&param.name);
                if st.params.iter().any(|q| ident_text(&q.name) == text) {
                    cx.push(param.name.span(), format!("duplicate parameter `{text}`"));
                }
                st.params.push(param);
            }
            Err(e) => {
                cx.push_syn(e);
                st.params.extend(placeholder_param(&start));
                skip_to_comma(input);
            }
        }
        if input.is_empty() {
            break;
        }
        if let Err(e) = input.parse::<Token![,]>() {
            cx.push(e.span(), "expected `,` between parameters");
            skip_to_comma(input);
            let _ = input.parse::<Token![,]>();
        }
    }
}

/// A parameter whose type does not parse (`y: &mut [f32 n]`), kept as one of any type when its
/// name reads, so that the stub keeps the declaration's arity (a call with every argument then
/// adds no error of its own).
fn placeholder_param(start: ParseStream) -> Option<ParsedParam> {
    let name: Ident = start.parse().ok()?;
    start.parse::<Token![:]>().ok()?;
    let any_type = quote::quote!(#name: _);
    parse_param.parse2(any_type).ok().map(|(param, _unsupported)| param)
}

fn mentions_any(tokens: TokenStream, names: &[String]) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => names.iter().any(|n| i == n),
        TokenTree::Group(g) => mentions_any(g.stream(), names),
        _ => false,
    })
}

fn skip_to_comma(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if matches!(&tt, TokenTree::Punct(p) if p.as_char() == ',') {
                return Ok(((), rest));
            }
            rest = next;
        }
        Ok(((), rest))
    });
}

fn is_self_param(input: ParseStream) -> bool {
    input.peek(Token![self])
        || (input.peek(Token![&]) && (input.peek2(Token![self]) || input.peek2(syn::Lifetime)))
        || (input.peek(Token![&]) && input.peek2(Token![mut]) && input.peek3(Token![self]))
        || (input.peek(Token![mut]) && input.peek2(Token![self]))
}

/// One `name: Type`; the second element is the error for an unsupported type (the parameter
/// itself is still returned, so the stub keeps the arity).
fn parse_param(input: ParseStream) -> syn::Result<(ParsedParam, Option<syn::Error>)> {
    let attrs = input.call(Attribute::parse_outer)?;
    if let Some(attr) = attrs.first() {
        return Err(syn::Error::new_spanned(attr, "attributes on kernel parameters are not supported"));
    }
    if input.peek(Token![...]) {
        return Err(input.error("a kernel declaration cannot be variadic"));
    }
    if is_self_param(input) {
        return Err(input.error("a kernel declaration takes no `self`: it is a free `fn`"));
    }
    let pat = syn::Pat::parse_single(input)?;
    input.parse::<Token![:]>()?;
    let ty: Type = input.parse()?;
    let name = match &pat {
        syn::Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => p.ident.clone(),
        _ => {
            return Err(syn::Error::new_spanned(
                &pat,
                format!(
                    "expected a plain parameter name, found the pattern `{}`: kernel parameters are `name: Type`",
                    tidy_tokens(&pat.to_token_stream())
                ),
            ))
        }
    };
    if RESERVED_PARAMS.contains(&ident_text(&name).as_str()) {
        let method = match ident_text(&name).as_str() {
            "opts" => "launch_with(&self, stream, cfg, opts, ...)",
            _ => "launch(&self, stream, cfg, ...)",
        };
        return Err(syn::Error::new(
            name.span(),
            format!(
                "parameter name `{name}` is taken by the generated `{method}`: call it `{name}_` (parameter names \
                 are checked against the `.cu`'s ignoring underscores, so `{name}_` still matches)"
            ),
        ));
    }
    let (nullable, classified) = match optional_pointee(&ty) {
        Some(inner) => (true, inner.and_then(classify_nullable)),
        None => (false, classify_type(&ty)),
    };
    let (kind, extent, err) = match classified {
        Ok((kind, None)) => (Some(kind), None, None),
        Ok((kind, Some(len))) => match extent_from_expr(len, tidy_tokens(&len.to_token_stream())) {
            Ok(extent) => (Some(kind), Some(extent), None),
            Err(e) => (Some(kind), None, Some(e)),
        },
        Err(e) => (None, None, Some(e)),
    };
    Ok((ParsedParam { name, ty, kind, extent, nullable }, err))
}
