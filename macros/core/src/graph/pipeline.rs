//! One `graph!` request through every stage, independent of the compiler (so it is testable):
//! read the spec → load the kernel declarations → check → dataflow → emit.

use std::path::Path;

use proc_macro2::{Span, TokenStream};
use syn::Ident;

use super::check::{self, Kernels};
use super::dataflow;
use super::emit::{self, diagram, docs, CodegenInput};
use super::ir::GraphIr;
use super::plan;
use super::spec::diag::SourceMap;
use super::spec::{self, include, RawSpec};
use crate::diagnostics::{Ctxt, Errors, Location};
use crate::syntax::naming::graph_struct_ident;
use crate::syntax::source::decls_with_modules;

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
    /// The stream-capture schedule of `capture_streamed()` (dataflow branches).
    pub schedule: dataflow::Schedule,
    /// The stream schedule of file order on one stream (the serialized plan's PDL rule).
    pub serial: dataflow::Schedule,
    /// The build plan of `capture()`.
    pub branched: plan::BuildPlan,
    /// The build plan of `capture_serialized()` and `profile()`.
    pub serialized: plan::BuildPlan,
}

impl Analysis {
    /// The dataflow as Graphviz DOT, `digraph <graph_name>`: the graph struct's `DOT` constant.
    pub fn dot(&self, graph_name: &str) -> String {
        diagram::dot(&self.ir, graph_name, &self.edges, &self.branched.programmatic_edges())
    }

    /// The dataflow as a Mermaid flowchart: the graph struct's `MERMAID` constant.
    pub fn mermaid(&self) -> String {
        diagram::mermaid(&self.ir, &self.edges, &self.branched.programmatic_edges())
    }
}

/// Parses and validates; `Err` holds every rendered error message. Without a record folder,
/// so PDL nodes are not checked against what nvcc compiled (see [`analyze_with_records`]).
pub fn analyze(req: &GraphRequest<'_>) -> Result<Analysis, Vec<String>> {
    analyze_with_records(req, None)
}

/// [`analyze`], and with `record_dir` (where the build left the compiled-kernel records,
/// `$OUT_DIR/kgraph`) every PDL node's kernel must be proven to wait on its grid dependency
/// (`check::pdl`).
pub fn analyze_with_records(req: &GraphRequest<'_>, record_dir: Option<&Path>) -> Result<Analysis, Vec<String>> {
    let analyzed = analyze_in(req, record_dir, &[]);
    analyzed.map(|(a, _)| a).map_err(|errors| SourceMap::new(req.spec_path, req.spec_text).render_errors(&errors))
}

/// [`analyze_with_records`] for a spec included through `chain` (the including specs' paths,
/// outermost first): the analysis and the raw model with every include spliced in, or every
/// error (an included spec's already rendered in its own file).
fn analyze_in(
    req: &GraphRequest<'_>,
    record_dir: Option<&Path>,
    chain: &[&str],
) -> Result<(Analysis, RawSpec), Errors> {
    let mut diags = Ctxt::new();
    let mut raw = spec::read(req.spec_text, &mut diags);
    if !diags.has_errors() {
        let chain: Vec<&str> = chain.iter().copied().chain([req.spec_path]).collect();
        splice_includes(&mut raw, req, record_dir, &chain, &mut diags);
    }
    // A spec that does not read, or whose includes do not splice, is not checked further.
    diags.check()?;
    let mut diags = Ctxt::new();
    let kernels = load_kernels(&raw, req, &mut diags);
    let ir = check::validate(&raw, &kernels, req.spec_path, &mut diags);
    if let (Some(ir), Some(dir)) = (&ir, record_dir) {
        check::pdl::check_pdl_waits(&raw, ir, dir, &mut diags);
    }
    include::name_spliced_nodes(&raw, &mut diags);
    diags.check()?;
    // `validate` returns no IR only with an error recorded: this is a kgraph bug, not a silent stub.
    let Some(ir) = ir else {
        return Err(Errors::one(Location::SpecFile, "internal error: the spec's checks found no graph and no error"));
    };
    let edges = dataflow::dependencies(&ir);
    let pdl: Vec<bool> = ir.nodes.iter().map(|n| n.pdl).collect();
    let schedule = dataflow::schedule(ir.nodes.len(), &edges, &pdl);
    let serial = dataflow::serial_schedule(ir.nodes.len(), &pdl);
    let (branched, serialized) = (plan::branched(&ir), plan::serialized(&ir));
    Ok((Analysis { ir, edges, schedule, serial, branched, serialized }, raw))
}

/// Splices every `[[include]]` of `raw` into it, in file order. Each included spec is analyzed
/// on its own first (its errors, rendered in its own file, go to `diags` as positioned ones,
/// plus one error at the include); binding errors go to `diags`.
fn splice_includes(
    raw: &mut RawSpec,
    req: &GraphRequest<'_>,
    record_dir: Option<&Path>,
    chain: &[&str],
    diags: &mut Ctxt,
) {
    for inc in std::mem::take(&mut raw.includes) {
        let Some((name, path)) = include::header(&inc, diags) else { continue };
        if chain.contains(&path.v.as_str()) {
            let cycle: Vec<&str> = chain.iter().copied().chain([path.v.as_str()]).collect();
            diags.push(path.span.clone(), format!("include cycle: {}", cycle.join(" -> ")));
            continue;
        }
        let text = match (req.read_file)(&path.v) {
            Ok(t) => t,
            Err(e) => {
                diags.push(
                    path.span.clone(),
                    format!("cannot read included spec `{}` (relative to the crate root): {e}", path.v),
                );
                continue;
            }
        };
        let sub_req = GraphRequest { spec_path: &path.v, spec_text: &text, struct_name: None, ..*req };
        match analyze_in(&sub_req, record_dir, chain) {
            Ok((_, sub)) => {
                include::splice(raw, &inc, &name.v, &path, &sub, diags);
            }
            Err(errors) => {
                let rendered = SourceMap::new(&path.v, &text).render_errors(&errors);
                diags.push(
                    path.span.clone(),
                    format!("included spec `{}` has {} error(s), reported in that file", path.v, rendered.len()),
                );
                for message in rendered {
                    diags.push(Location::Positioned, message);
                }
            }
        }
        raw.includes.push(inc);
    }
}

/// The `#[kernel]` declarations of the spec's `[kernels] source`, read through `req`.
fn load_kernels(raw: &RawSpec, req: &GraphRequest<'_>, diags: &mut Ctxt) -> Kernels {
    let Some(source) = raw.kernels.as_ref().and_then(|k| k.source.as_ref()) else {
        return Kernels::Unavailable;
    };
    let text = match (req.read_file)(&source.v) {
        Ok(t) => t,
        Err(e) => {
            diags.push(
                source.span.clone(),
                format!("cannot read kernel declarations `{}` (relative to the crate root): {e}", source.v),
            );
            return Kernels::Unavailable;
        }
    };
    match decls_with_modules(&text) {
        Ok(decls) if decls.is_empty() => {
            diags.push(source.span.clone(), format!("`{}` has no `#[kernel]` declarations", source.v));
            Kernels::Unavailable
        }
        Ok(decls) => Kernels::Loaded(decls),
        Err(errors) => {
            for e in errors {
                diags.push(
                    source.span.clone(),
                    format!("`{}`: a `#[kernel]` declaration does not parse: {e}", source.v),
                );
            }
            Kernels::Unavailable
        }
    }
}

/// The full expansion of a valid spec; `Err` holds every rendered error message.
pub fn generate(req: &GraphRequest<'_>) -> Result<TokenStream, Vec<String>> {
    generate_with_records(req, None)
}

/// [`generate`] with the PDL rule checked against the records in `record_dir`
/// ([`analyze_with_records`]): what `graph!` runs.
pub fn generate_with_records(req: &GraphRequest<'_>, record_dir: Option<&Path>) -> Result<TokenStream, Vec<String>> {
    let a = analyze_with_records(req, record_dir)?;
    let name = req.struct_name.clone().unwrap_or_else(|| graph_struct_ident(req.spec_path, Span::call_site()));
    let programmatic = a.branched.programmatic_edges();
    let doc = docs::struct_doc(&a.ir, &a.edges, &programmatic);
    let dot = a.dot(&name.to_string());
    let mermaid = a.mermaid();
    let mut tracked = vec![join(req.root, req.spec_path), join(req.root, &a.ir.kernel_source)];
    for inc in &a.ir.includes {
        let path = join(req.root, &inc.spec);
        if !tracked.contains(&path) {
            tracked.push(path);
        }
    }
    Ok(emit::generate(&CodegenInput {
        ir: &a.ir,
        name: &name,
        edges: &a.edges,
        schedule: &a.schedule,
        branched: &a.branched,
        serialized: &a.serialized,
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
