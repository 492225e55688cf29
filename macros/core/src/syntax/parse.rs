//! Parsing `#[kernel("file.cu")] pub fn name(a: &[f32], n: i32);` into the typed model.
//!
//! A body-less `fn` is not a `syn::ItemFn` (syn hands it over as `Item::Verbatim`), so the
//! declaration grammar is parsed here directly. Parsing never stops at the first problem: every
//! error of one declaration is collected, and what did parse is kept for a stub.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Attribute, Ident, LitStr, Token, Type, Visibility};

use super::extent::extent_from_expr;
use super::model::{Align, DeviceFn, Extent, KernelDecl, MaxBlock, Param, ParamKind, Rename, Requirement};
use super::naming::ident_text;
use super::requires::{parse_align, parse_requires};
use super::text::tidy_tokens;
use super::types::{classify_nullable, classify_type, optional_pointee};
use crate::diagnostics::{Ctxt, Errors};

/// Parameter names the generated `launch(&self, stream, cfg, ...)` and
/// `launch_with(&self, stream, cfg, opts, ...)` use themselves.
pub(crate) const RESERVED_PARAMS: [&str; 3] = ["stream", "cfg", "opts"];

/// The arguments of `#[kernel("file.cu", name = "symbol", unsafe(extents))]`.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct KernelArgs {
    /// The `.cu` file as written.
    pub file: String,
    /// Span of the file literal.
    pub file_span: Span,
    /// `name = "symbol"` with the span of its literal, when given.
    pub symbol: Option<(String, Span)>,
    /// The span of `unsafe(extents)`, when given.
    pub extents_promise: Option<Span>,
    /// `unsafe(device_fn = "name")`, when given.
    pub device_fn: Option<DeviceFn>,
    /// `shared = <bytes>`, when given.
    pub shared: Option<Extent>,
    /// `max_block = <threads>`, when given.
    pub max_block: Option<MaxBlock>,
    /// `rename(rust = cu, ...)`: parameters deliberately named otherwise than in the `.cu`.
    pub renames: Vec<Rename>,
    /// `requires(<cond>, ...)`: the conditions the promise is made under.
    pub requires: Vec<Requirement>,
    /// `align(<param> = <bytes>, ...)`: pointer parameters' required alignment.
    pub align: Vec<Align>,
}

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

/// The tokens inside `#[kernel(...)]` (empty for a bare `#[kernel]`), or an error for other forms.
fn kernel_attr_tokens(attr: &Attribute) -> syn::Result<TokenStream> {
    match &attr.meta {
        syn::Meta::List(list) => Ok(list.tokens.clone()),
        syn::Meta::Path(_) => Ok(TokenStream::new()),
        syn::Meta::NameValue(nv) => {
            Err(syn::Error::new_spanned(nv, "expected `#[kernel(\"file.cu\")]`: the `.cu` file goes in parentheses"))
        }
    }
}

const ARGS_HELP: &str = "expected `#[kernel(\"file.cu\")]`, optionally followed by `name = \"symbol\"`, \
     `unsafe(extents)`, `unsafe(device_fn = \"name\")`, `shared = <bytes>`, `max_block = <threads>`, `requires(<cond>, ...)`, `align(param = <bytes>)` and `rename(param = cu_name)`";

/// Parses the attribute's arguments: the `.cu` file, then an optional `name = "symbol"`.
/// `span` is where to report an empty argument list (the attribute itself).
pub(crate) fn parse_kernel_args(tokens: TokenStream, span: Span) -> syn::Result<KernelArgs> {
    if tokens.is_empty() {
        return Err(syn::Error::new(span, format!("missing the kernel's `.cu` file: {ARGS_HELP}")));
    }
    let parser = |input: ParseStream| -> syn::Result<KernelArgs> {
        let file: LitStr = input.parse().map_err(|e| {
            syn::Error::new(e.span(), format!("expected a string literal naming the `.cu` file: {ARGS_HELP}"))
        })?;
        check_file_name(&file)?;
        let mut symbol: Option<(String, Span)> = None;
        let mut extents_promise: Option<Span> = None;
        let mut device_fn: Option<DeviceFn> = None;
        let mut shared: Option<Extent> = None;
        let mut max_block: Option<MaxBlock> = None;
        let mut renames: Vec<Rename> = Vec::new();
        let mut requires: Option<Vec<Requirement>> = None;
        let mut align: Vec<Align> = Vec::new();
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            if input.peek(Token![unsafe]) {
                let promises = super::promise::parse_promises(input)?;
                if let Some(span) = promises.extents {
                    if extents_promise.replace(span).is_some() {
                        return Err(syn::Error::new(span, "`unsafe(extents)` given twice"));
                    }
                }
                if let Some(f) = promises.device_fn {
                    let span = f.span;
                    if device_fn.replace(f).is_some() {
                        return Err(syn::Error::new(span, "`unsafe(device_fn = ..)` given twice"));
                    }
                }
                continue;
            }
            let key: Ident = input.parse().map_err(|e| syn::Error::new(e.span(), ARGS_HELP))?;
            if key == "shared" {
                input.parse::<Token![=]>()?;
                let expr: syn::Expr = input.parse()?;
                let text = tidy_tokens(&expr.to_token_stream());
                if shared.replace(super::extent::shared_from_expr(&expr, text)?).is_some() {
                    return Err(syn::Error::new_spanned(&expr, "`shared` given twice"));
                }
                continue;
            }
            if key == "max_block" {
                input.parse::<Token![=]>()?;
                let bound = parse_max_block(input)?;
                if max_block.replace(bound).is_some() {
                    return Err(syn::Error::new(bound.span, "`max_block` given twice"));
                }
                continue;
            }
            if key == "rename" {
                parse_renames(input, &mut renames)?;
                continue;
            }
            if key == "requires" {
                if requires.is_some() {
                    return Err(syn::Error::new(
                        key.span(),
                        "`requires` given twice: list every condition in one `requires(a, b, ...)`",
                    ));
                }
                requires = Some(parse_requires(input, &key)?);
                continue;
            }
            if key == "align" {
                parse_align(input, &key, &mut align)?;
                continue;
            }
            if key != "name" {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown option `{key}`: the options are `name = \"symbol\"` (the kernel's extern \"C\" name or C++ name), \
                         `unsafe(extents)` (the promise that the kernel stays within the declared extents), \
                         `unsafe(device_fn = \"name\")` (its block as a device function, for resident graphs), \
                         `shared = <bytes>` (the dynamic shared memory it uses, over its scalars and `block.x`), \
                         `max_block = <threads>` (the most threads per block it is written for), \
                         `requires(<cond>, ...)` (the conditions on its scalars and launch shape the promise is made under), \
                         `align(param = <bytes>)` (a pointer parameter's required alignment) and \
                         `rename(param = cu_name)` (a parameter named otherwise than in the `.cu`, on purpose)"
                    ),
                ));
            }
            input.parse::<Token![=]>()?;
            let lit: LitStr = input.parse()?;
            if symbol.is_some() {
                return Err(syn::Error::new(lit.span(), "`name` given twice"));
            }
            let value = lit.value();
            if !super::naming::is_c_identifier(&value) && !super::naming::is_cpp_kernel_name(&value) {
                return Err(syn::Error::new(
                    lit.span(),
                    format!(
                        "`{value}` is not a kernel name: `name` is the kernel's extern \"C\" symbol, a C++ kernel's name \
                         with its template arguments (`gemm<float, 128>`, namespaces allowed: `ops::gemm<float, 128>`), or \
                         its mangled symbol"
                    ),
                ));
            }
            symbol = Some((value, lit.span()));
        }
        Ok(KernelArgs {
            file: file.value(),
            file_span: file.span(),
            symbol,
            extents_promise,
            device_fn,
            shared,
            max_block,
            renames,
            requires: requires.unwrap_or_default(),
            align,
        })
    };
    parser.parse2(tokens)
}

/// `rename(n = num_tokens, ...)` (after the word `rename`): each Rust parameter with the
/// `.cu`'s name for it. The `.cu` name may be a Rust keyword (`rename(kind = type)`).
fn parse_renames(input: ParseStream, renames: &mut Vec<Rename>) -> syn::Result<()> {
    let content;
    let paren = syn::parenthesized!(content in input);
    if content.is_empty() {
        return Err(syn::Error::new(
            paren.span.join(),
            "expected `rename(param = cu_name)`: the Rust parameter, then the `.cu`'s name for it",
        ));
    }
    while !content.is_empty() {
        let rust = Ident::parse_any(&content)?;
        content.parse::<Token![=]>()?;
        let cu = Ident::parse_any(&content)?;
        let span = rust.span().join(cu.span()).unwrap_or_else(|| rust.span());
        if renames.iter().any(|r| ident_text(&r.rust) == ident_text(&rust)) {
            return Err(syn::Error::new(span, format!("`{}` renamed twice", ident_text(&rust))));
        }
        renames.push(Rename { rust, cu: ident_text(&cu), span });
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(())
}

/// `max_block = <threads>` (after `=`): an integer literal from 1 to 1024 (a block has at most
/// 1024 threads on every GPU CUDA supports).
fn parse_max_block(input: ParseStream) -> syn::Result<MaxBlock> {
    let lit: syn::LitInt = input.parse().map_err(|e| {
        syn::Error::new(e.span(), "expected `max_block = <threads>`: an integer literal, the most threads per block")
    })?;
    match lit.base10_parse::<u32>() {
        Ok(threads) if (1..=1024).contains(&threads) && lit.suffix().is_empty() => {
            Ok(MaxBlock { threads, span: lit.span() })
        }
        _ => Err(syn::Error::new(
            lit.span(),
            format!(
                "`max_block = {lit}`: the most threads per block is an integer from 1 to 1024 (`block.x * block.y * \
                 block.z`, as `__launch_bounds__` counts it), without a suffix"
            ),
        )),
    }
}

fn check_file_name(file: &LitStr) -> syn::Result<()> {
    let value = file.value();
    let stem = value.strip_suffix(".cu").unwrap_or("");
    if stem.is_empty() {
        return Err(syn::Error::new(file.span(), format!("`{value}` is not a `.cu` file: {ARGS_HELP}")));
    }
    if value.contains(['/', '\\']) {
        return Err(syn::Error::new(
            file.span(),
            format!("`{value}`: name a file directly in the kernels folder (kgraph-build compiles `kernels/*.cu`)"),
        ));
    }
    Ok(())
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
