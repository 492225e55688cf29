//! The attribute of a declaration, `#[kernel("file.cu", name = "symbol", unsafe(extents), ...)]`:
//! its tokens and its options parsed into [`KernelArgs`], each option's errors spanned.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Ident, LitStr, Token};

use crate::syntax::model::{Align, DeviceFn, Extent, MaxBlock, Rename, Requirement};
use crate::syntax::naming::ident_text;
use crate::syntax::requires::{parse_align, parse_requires};
use crate::syntax::text::tidy_tokens;

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

/// The tokens inside `#[kernel(...)]` (empty for a bare `#[kernel]`), or an error for other forms.
pub(super) fn kernel_attr_tokens(attr: &Attribute) -> syn::Result<TokenStream> {
    match &attr.meta {
        syn::Meta::List(list) => Ok(list.tokens.clone()),
        syn::Meta::Path(_) => Ok(TokenStream::new()),
        syn::Meta::NameValue(nv) => {
            Err(syn::Error::new_spanned(nv, "expected `#[kernel(\"file.cu\")]`: the `.cu` file goes in parentheses"))
        }
    }
}

pub(super) const ARGS_HELP: &str = "expected `#[kernel(\"file.cu\")]`, optionally followed by `name = \"symbol\"`, \
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
                let promises = crate::syntax::promise::parse_promises(input)?;
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
                if shared.replace(crate::syntax::extent::shared_from_expr(&expr, text)?).is_some() {
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
                return Err(unknown_option(&key));
            }
            symbol = Some(parse_symbol(input, symbol.is_some())?);
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

/// The error for an option of `#[kernel(...)]` that is not one of them, listing them all.
fn unknown_option(key: &Ident) -> syn::Error {
    syn::Error::new(
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
    )
}

/// `name = "symbol"` (after the word `name`): the kernel's extern "C" symbol, a C++ kernel's name
/// or its mangled symbol, with the literal's span; `given` when an earlier `name` was.
fn parse_symbol(input: ParseStream, given: bool) -> syn::Result<(String, Span)> {
    input.parse::<Token![=]>()?;
    let lit: LitStr = input.parse()?;
    if given {
        return Err(syn::Error::new(lit.span(), "`name` given twice"));
    }
    let value = lit.value();
    if !crate::syntax::naming::is_c_identifier(&value) && !crate::syntax::naming::is_cpp_kernel_name(&value) {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "`{value}` is not a kernel name: `name` is the kernel's extern \"C\" symbol, a C++ kernel's name \
                 with its template arguments (`gemm<float, 128>`, namespaces allowed: `ops::gemm<float, 128>`), or \
                 its mangled symbol"
            ),
        ));
    }
    Ok((value, lit.span()))
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
