//! `kgraph::graph!("graphs/x.toml")`: a TOML graph spec, validated at compile time against the
//! kernels' `#[kernel]` declarations, becomes a struct that owns the buffers, launches the nodes
//! eagerly or as a captured CUDA graph with parallel branches, and updates scalars in place.
//!
//! Pipeline: [`spec::read`] (TOML → spanned raw model) → [`validate::validate`] (names, dtypes,
//! roles, expressions, arguments against the declared signatures, node order, usage; all errors
//! collected) → [`dataflow`] (dependencies, transitive reduction, stream schedule) →
//! [`codegen`] + [`docs`] + [`diagram`]. Errors carry `file:line:col` of the TOML and the line.
//! The format is documented in `docs/graph-spec.md`.

mod bind;
pub mod codegen;
mod codegen_host;
mod codegen_run;
pub mod dataflow;
pub mod diag;
pub mod diagram;
pub mod docs;
pub mod expr;
pub mod ir;
pub mod spec;
pub mod validate;

#[cfg(test)]
mod pdl_tests;

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

use diag::{Diagnostics, SourceMap};
use ir::GraphIr;
use validate::Kernels;

/// Environment variable naming the directory `graph!` paths are relative to; defaults to
/// `CARGO_MANIFEST_DIR`. (kgraph's compile-fail tests set it: trybuild builds the cases in a
/// crate of its own.)
pub const MANIFEST_DIR_VAR: &str = "KGRAPH_MANIFEST_DIR";

/// One `graph!` request, independent of the compiler (so it is testable).
pub struct GraphRequest<'a> {
    /// The spec path as written in the macro call (messages, docs, `SPEC`).
    pub spec_path: &'a str,
    /// The spec's text.
    pub spec_text: &'a str,
    /// Struct name override (`graph!("x.toml", name = Foo)`).
    pub struct_name: Option<Ident>,
    /// The directory relative paths are resolved against, as written into `include_bytes!`.
    pub root: &'a str,
    /// Reads a file relative to `root` (the kernels' Rust source).
    pub read_file: &'a dyn Fn(&str) -> std::io::Result<String>,
}

/// The analysis of a valid spec.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The validated graph.
    pub ir: GraphIr,
    /// The reduced dependency edges.
    pub edges: Vec<dataflow::Edge>,
    /// The capture schedule of `capture()` (dataflow branches).
    pub schedule: dataflow::Schedule,
    /// The capture schedule of `capture_serialized()` (file order on one stream).
    pub serial: dataflow::Schedule,
}

/// Parses and validates; `Err` holds every rendered error message.
pub fn analyze(req: &GraphRequest<'_>) -> Result<Analysis, Vec<String>> {
    let map = SourceMap::new(req.spec_path, req.spec_text);
    let mut diags = Diagnostics::new();
    let raw = spec::read(req.spec_text, &mut diags);
    if !diags.is_empty() {
        return Err(diags.render(&map));
    }
    let kernels = load_kernels(&raw, req, &mut diags);
    let ir = validate::validate(&raw, &kernels, req.spec_path, &mut diags);
    match ir {
        Some(ir) if diags.is_empty() => {
            let edges = dataflow::dependencies(&ir);
            let pdl: Vec<bool> = ir.nodes.iter().map(|n| n.pdl).collect();
            let schedule = dataflow::schedule(ir.nodes.len(), &edges, &pdl);
            let serial = dataflow::serial_schedule(ir.nodes.len(), &pdl);
            Ok(Analysis { ir, edges, schedule, serial })
        }
        _ => Err(diags.render(&map)),
    }
}

fn load_kernels(raw: &spec::RawSpec, req: &GraphRequest<'_>, diags: &mut Diagnostics) -> Kernels {
    let Some(source) = raw.kernels.as_ref().and_then(|k| k.source.as_ref()) else {
        return Kernels::Unavailable;
    };
    let text = match (req.read_file)(&source.v) {
        Ok(t) => t,
        Err(e) => {
            diags.error(
                source.span.clone(),
                format!("cannot read kernel declarations `{}` (relative to the crate root): {e}", source.v),
            );
            return Kernels::Unavailable;
        }
    };
    match crate::decls_from_source(&text) {
        Ok(decls) if decls.is_empty() => {
            diags.error(source.span.clone(), format!("`{}` has no `#[kernel]` declarations", source.v));
            Kernels::Unavailable
        }
        Ok(decls) => Kernels::Loaded(decls),
        Err(errors) => {
            for e in errors {
                diags.error(
                    source.span.clone(),
                    format!("`{}`: a `#[kernel]` declaration does not parse: {e}", source.v),
                );
            }
            Kernels::Unavailable
        }
    }
}

/// `test_affine` → `TestAffine`.
pub fn struct_name_for(path: &str) -> String {
    let stem = Path::new(path).file_stem().and_then(|s| s.to_str()).unwrap_or("graph");
    let camel: String = stem
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next().map(|f| f.to_ascii_uppercase()).into_iter().chain(c).collect::<String>()
        })
        .collect();
    if camel.is_empty() || camel.starts_with(|c: char| c.is_ascii_digit()) {
        format!("Graph{camel}")
    } else {
        camel
    }
}

/// The full expansion of a valid spec; `Err` holds every rendered error message.
pub fn generate(req: &GraphRequest<'_>) -> Result<TokenStream, Vec<String>> {
    let a = analyze(req)?;
    let name =
        req.struct_name.clone().unwrap_or_else(|| Ident::new(&struct_name_for(req.spec_path), Span::call_site()));
    let programmatic = a.schedule.programmatic_edges();
    let doc = docs::struct_doc(&a.ir, &a.edges, &programmatic);
    let dot = diagram::dot(&a.ir, &name.to_string(), &a.edges, &programmatic);
    let mermaid = diagram::mermaid(&a.ir, &a.edges, &programmatic);
    let tracked = vec![join(req.root, req.spec_path), join(req.root, &a.ir.kernel_source)];
    Ok(codegen::generate(&codegen::CodegenInput {
        ir: &a.ir,
        name: &name,
        edges: &a.edges,
        schedule: &a.schedule,
        serial: &a.serial,
        programmatic: &programmatic,
        tracked: &tracked,
        doc: &doc,
        dot: &dot,
        mermaid: &mermaid,
    }))
}

fn join(root: &str, rel: &str) -> String {
    if Path::new(rel).is_absolute() {
        rel.to_string()
    } else {
        format!("{}/{}", root.trim_end_matches('/'), rel)
    }
}

/// The macro's arguments: `"path.toml"` and optionally `, name = StructName`.
struct MacroArgs {
    path: LitStr,
    name: Option<Ident>,
}

impl Parse for MacroArgs {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let path: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the spec file: `graph!(\"graphs/x.toml\")` or `graph!(\"graphs/x.toml\", name = MyGraph)`",
            )
        })?;
        let mut name = None;
        while input.parse::<Token![,]>().is_ok() {
            if input.is_empty() {
                break;
            }
            let key: Ident = input.parse()?;
            if key != "name" {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown option `{key}`: the only option is `name = StructName`"),
                ));
            }
            input.parse::<Token![=]>()?;
            name = Some(input.parse()?);
        }
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the spec file"));
        }
        Ok(MacroArgs { path, name })
    }
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
    let name = args.name.clone().unwrap_or_else(|| Ident::new(&struct_name_for(&spec_path), args.path.span()));
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
    let read_file = |rel: &str| std::fs::read_to_string(root.join(rel));
    let root_str = root.to_string_lossy();
    let req = GraphRequest {
        spec_path: &spec_path,
        spec_text: &text,
        struct_name: Some(name.clone()),
        root: &root_str,
        read_file: &read_file,
    };
    match generate(&req) {
        Ok(tokens) => tokens,
        Err(messages) => {
            let errors = messages.iter().map(|m| syn::Error::new(args.path.span(), m).to_compile_error());
            stub(quote!(#(#errors)*))
        }
    }
}
