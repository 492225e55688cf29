//! The `graph!` proc-macro against the compiler's environment: its arguments, the spec and
//! kernel declarations read relative to the crate root, and a stub struct when the spec has
//! errors.

use std::num::NonZeroU32;
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

use super::pipeline::{generate_with, GraphRequest, Options};
use crate::diagnostics::{Ctxt, Errors};
use crate::syntax::naming::graph_struct_ident;

/// Environment variable naming the directory `graph!` paths are relative to; defaults to
/// `CARGO_MANIFEST_DIR`. (kgraph's compile-fail tests set it: trybuild builds the cases in a
/// crate of its own.)
pub const MANIFEST_DIR_VAR: &str = "KGRAPH_MANIFEST_DIR";

/// The macro's arguments: `"path.toml"` and optionally `, name = StructName`,
/// `, repeat = K` (the whole spec as the body of one `[[while]] repeat = K` loop: K steps per
/// launch), `, dims = { batch = 512, ... }` (dims of the spec given other values: one spec,
/// several shapes), `, plan_memory = false` (no memory plan) and `, unsafe(pdl_waits_first)`
/// (the memory plan may take PDL edges as ordering).
struct MacroArgs {
    path: LitStr,
    name: Option<Ident>,
    repeat: Option<syn::LitInt>,
    dims: Vec<(Ident, syn::LitInt)>,
    /// `plan_memory = false`: no memory plan.
    no_memory_plan: bool,
    /// `unsafe(pdl_waits_first)`: every PDL kernel waits before it touches any buffer.
    pdl_waits_first: bool,
}

/// `{ name = 512, ... }`.
fn parse_dims(input: ParseStream<'_>) -> syn::Result<Vec<(Ident, syn::LitInt)>> {
    let content;
    syn::braced!(content in input);
    let mut dims = Vec::new();
    while !content.is_empty() {
        let name: Ident = content.parse()?;
        content.parse::<Token![=]>()?;
        let value: syn::LitInt = content.parse()?;
        dims.push((name, value));
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(dims)
}

impl Parse for MacroArgs {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let path: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the spec file: `graph!(\"graphs/x.toml\")` or `graph!(\"graphs/x.toml\", name = MyGraph)`",
            )
        })?;
        let (mut name, mut repeat, mut dims) = (None, None, Vec::new());
        let (mut no_memory_plan, mut pdl_waits_first) = (false, false);
        while input.parse::<Token![,]>().is_ok() {
            if input.is_empty() {
                break;
            }
            if input.peek(Token![unsafe]) {
                pdl_waits_first = parse_unsafe_promise(input)?;
                continue;
            }
            let key: Ident = input.parse()?;
            if key == "name" {
                input.parse::<Token![=]>()?;
                name = Some(input.parse()?);
            } else if key == "repeat" {
                input.parse::<Token![=]>()?;
                repeat = Some(input.parse()?);
            } else if key == "dims" {
                input.parse::<Token![=]>()?;
                dims = parse_dims(input)?;
            } else if key == "plan_memory" {
                input.parse::<Token![=]>()?;
                no_memory_plan = !input.parse::<syn::LitBool>()?.value;
            } else {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown option `{key}`: the options are `name = StructName`, `repeat = K`, `dims = {{ dim = value, .. }}`, `plan_memory = false` and `unsafe(pdl_waits_first)`"
                    ),
                ));
            }
        }
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the spec file"));
        }
        Ok(MacroArgs { path, name, repeat, dims, no_memory_plan, pdl_waits_first })
    }
}

/// `unsafe(pdl_waits_first)`: the one promise a `graph!` call can make (see `docs/graph-spec.md`,
/// "Memory plan"); `true` once parsed.
fn parse_unsafe_promise(input: ParseStream<'_>) -> syn::Result<bool> {
    input.parse::<Token![unsafe]>()?;
    let content;
    syn::parenthesized!(content in input);
    let promise: Ident = content.parse()?;
    if promise != "pdl_waits_first" || !content.is_empty() {
        return Err(syn::Error::new(
            promise.span(),
            "the promise `graph!` takes is `unsafe(pdl_waits_first)`: every PDL kernel of the graph executes `griddepcontrol.wait` before it touches any buffer",
        ));
    }
    Ok(true)
}

fn manifest_dir() -> PathBuf {
    std::env::var_os(MANIFEST_DIR_VAR)
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR"))
        .map(PathBuf::from)
        .unwrap_or_default()
}

/// The `graph!` proc-macro: reads the spec and kernel declarations relative to the crate root,
/// and expands to the graph struct, or to every spec error (spanned on the path literal) plus a
/// stub struct so the rest of the crate does not cascade into further errors.
pub fn expand(input: TokenStream) -> TokenStream {
    let args: MacroArgs = match syn::parse2(input) {
        Ok(a) => a,
        Err(e) => return e.to_compile_error(),
    };
    let spec_path = args.path.value();
    let root = manifest_dir();
    let name = args.name.clone().unwrap_or_else(|| graph_struct_ident(&spec_path, args.path.span()));
    let stub = |errors: TokenStream| {
        quote! {
            #errors
            /// Stub: the graph spec has errors (see the compile errors).
            pub struct #name {
                _spec_has_errors: (),
            }
        }
    };
    let spec_file = root.join(&spec_path);
    let text = match std::fs::read_to_string(&spec_file) {
        Ok(t) => t,
        Err(e) => {
            let msg = format!("cannot read graph spec `{spec_path}` ({}): {e}", spec_file.display());
            return stub(syn::Error::new(args.path.span(), msg).to_compile_error());
        }
    };
    let text = match override_dims(&text, &args.dims) {
        Ok(t) => t,
        Err(errors) => return stub(errors.to_compile_error(args.path.span())),
    };
    let repeat = match &args.repeat {
        Some(k) => match k.base10_parse::<NonZeroU32>() {
            Ok(k) => Some(k),
            Err(_) => {
                return stub(
                    syn::Error::new(k.span(), "`repeat` takes an integer from 1 to 4294967295").to_compile_error(),
                )
            }
        },
        None => None,
    };
    let read_file = |rel: &str| std::fs::read_to_string(root.join(rel));
    let root_str = root.to_string_lossy();
    let req = GraphRequest {
        spec_path: &spec_path,
        spec_text: &text,
        struct_name: Some(name.clone()),
        root: &root_str,
        read_file: &read_file,
    };
    let record_dir = crate::compiled::record_dir_from_env();
    let kernel_dirs = crate::kernel::config::Config::from_env().kernel_dirs;
    let options = Options {
        kernel_dirs: &kernel_dirs,
        record_dir: record_dir.as_deref(),
        repeat,
        no_memory_plan: args.no_memory_plan,
        pdl_waits_first: args.pdl_waits_first,
        // The build lowered the spec as written: a variant of it has no resident kernel.
        resident: args.dims.is_empty() && repeat.is_none(),
    };
    match generate_with(&req, &options) {
        Ok(tokens) => tokens,
        Err(messages) => {
            let errors = messages.iter().map(|m| syn::Error::new(args.path.span(), m).to_compile_error());
            stub(quote!(#(#errors)*))
        }
    }
}

/// The spec text with each `dims` override written over its dim's value (so every later check,
/// and every message quoting the line, sees the value in force); an override of a dim the spec
/// does not have is an error at its name. A spec that does not parse is left as it is.
fn override_dims(text: &str, dims: &[(Ident, syn::LitInt)]) -> Result<String, Errors> {
    if dims.is_empty() {
        return Ok(text.to_string());
    }
    let mut diags = Ctxt::new();
    let raw = super::spec::read(text, &mut diags);
    if diags.check().is_err() {
        return Ok(text.to_string());
    }
    let mut edits = Vec::new();
    let mut cx = Ctxt::new();
    for (i, (name, value)) in dims.iter().enumerate() {
        if dims[..i].iter().any(|(earlier, _)| earlier == name) {
            cx.push(name.span(), format!("dim `{name}` is given twice"));
            continue;
        }
        let Some(dim) = raw.dims.iter().find(|d| *name == d.name.v) else {
            let have: Vec<&str> = raw.dims.iter().map(|d| d.name.v.as_str()).collect();
            cx.push(name.span(), format!("the spec has no dim `{name}` (its dims: {})", have.join(", ")));
            continue;
        };
        match value.base10_parse::<i64>() {
            Ok(v) => edits.push((dim.value.span.clone(), v.to_string())),
            Err(_) => cx.push(value.span(), "a dim is an integer (i64)"),
        }
    }
    cx.check()?;
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = text.to_string();
    for (span, value) in edits {
        out.replace_range(span, &value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::graph::expand::override_dims;

    #[test]
    fn a_dims_override_rewrites_the_value_in_place_and_keeps_the_rest_of_the_line() {
        let text = "[dims]\nbatch = 256 # rows\n# m next\nm = 3\n";
        let dims = [(syn::parse_quote!(m), syn::parse_quote!(40)), (syn::parse_quote!(batch), syn::parse_quote!(512))];
        let out = override_dims(text, &dims).unwrap();
        assert_eq!(out, "[dims]\nbatch = 512 # rows\n# m next\nm = 40\n");
        assert_eq!(override_dims(text, &[]).unwrap(), text, "no override, no change");
    }
}
