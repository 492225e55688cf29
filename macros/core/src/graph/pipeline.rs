//! One `graph!` request through every stage, independent of the compiler (so it is testable):
//! read the spec → load the kernel declarations → check → dataflow → emit.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::Path;

use proc_macro2::{Span, TokenStream};
use syn::Ident;

use super::check::{self, Kernels};
use super::dataflow;
use super::emit::{self, diagram, docs, CodegenInput};
use super::ir::GraphIr;
use super::memplan::{self, MemoryPlan};
use super::plan;
use super::spec::diag::SourceMap;
use super::spec::{self, include, ArgValue, RawSpec, S};
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
    /// Which buffers share the arena, and where.
    pub memory: MemoryPlan,
}

impl Analysis {
    /// The dataflow as Graphviz DOT, `digraph <graph_name>`: the graph struct's `DOT` constant.
    pub fn dot(&self, graph_name: &str) -> String {
        diagram::dot(&self.ir, graph_name, &self.edges, &self.branched.programmatic_edges())
    }

    /// The dataflow as DOT with the memory plan drawn beside it (`kgraph dot --plan`).
    pub fn dot_with_plan(&self, graph_name: &str) -> String {
        memplan::diagram::with_plan(&self.dot(graph_name), &self.ir, &self.memory)
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
    analyze_with(req, &Options { record_dir, ..Options::default() })
}

/// What a `graph!` call asks beyond its spec.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// Where the build left the compiled-kernel records (see [`analyze_with_records`]).
    pub record_dir: Option<&'a Path>,
    /// `graph!(.., repeat = K)`: every node (included ones too) in one loop of K iterations.
    pub repeat: Option<NonZeroU32>,
    /// `graph!(.., plan_memory = false)`: no memory plan, whatever the spec says.
    pub no_memory_plan: bool,
    /// `graph!(.., unsafe(pdl_waits_first))`: the caller promises that every PDL kernel of the
    /// graph executes `griddepcontrol.wait` before it touches any buffer, so the memory plan
    /// may take programmatic edges as ordering. Without it, only edges into kernels whose
    /// compiled records in `record_dir` prove it (`pdl_wait_first`) order.
    pub pdl_waits_first: bool,
    /// The kernel folders of the build (where a resident kernel's `.cu` includes come from).
    pub kernel_dirs: &'a [std::path::PathBuf],
    /// Honour the spec's `resident = true` (the build's request, and `graph!` without `repeat`
    /// or `dims`, whose spec is the one the build lowered).
    pub resident: bool,
}

/// At most this many levels of `[[include]]` nest: far more than a spec needs, far less than
/// what would exhaust the stack (each level is analyzed on its own, recursively).
pub const MAX_INCLUDE_DEPTH: usize = 64;

/// An include may not bring a spec (its own nodes and those spliced so far) above this many
/// nodes: includes that multiply (each level including the next twice) stop here with an
/// error, long before the time and memory they would take.
pub const MAX_SPLICED_NODES: usize = 1 << 14;

/// [`analyze`] with `options`: every error rendered once (one included by several specs is
/// reported at its first include).
pub fn analyze_with(req: &GraphRequest<'_>, options: &Options<'_>) -> Result<Analysis, Vec<String>> {
    let mut included = Included::default();
    let analyzed = analyze_in(req, options, &[], &mut included);
    analyzed
        .map(|(a, _)| a)
        .map_err(|errors| once_each(SourceMap::new(req.spec_path, req.spec_text).render_errors(&errors)))
}

/// `errors` without repeats: two errors with the same first line (position and message) are
/// one, reported through two includes (its later includer's note is dropped).
pub fn once_each(errors: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    errors.into_iter().filter(|e| seen.insert(e.lines().next().unwrap_or_default().to_string())).collect()
}

/// The included specs analyzed so far in one request, by path and nesting level: each is
/// analyzed once however often it is included, so a spec including another twice per level
/// costs one analysis per level, not 2^levels. `Err` holds its errors rendered in its file.
#[derive(Default)]
struct Included {
    specs: BTreeMap<(String, usize), Result<RawSpec, Vec<String>>>,
}

/// [`analyze_with`] for a spec included through `chain` (the including specs' paths,
/// outermost first; empty for the spec of the request): the analysis and the raw model with
/// every include spliced in, or every error (an included spec's already rendered in its own
/// file). `options.repeat` applies to the request's spec only.
fn analyze_in(
    req: &GraphRequest<'_>,
    options: &Options<'_>,
    chain: &[&str],
    included: &mut Included,
) -> Result<(Analysis, RawSpec), Errors> {
    let mut diags = Ctxt::new();
    let mut raw = spec::read(req.spec_text, &mut diags);
    if !diags.has_errors() {
        let chain: Vec<&str> = chain.iter().copied().chain([req.spec_path]).collect();
        splice_includes(&mut raw, req, options.record_dir, &chain, included, &mut diags);
    }
    // A spec that does not read, or whose includes do not splice, is not checked further.
    diags.check()?;
    let mut diags = Ctxt::new();
    let kernels = load_kernels(&raw, req, &mut diags);
    let repeat = if chain.is_empty() { options.repeat } else { None };
    let resident = chain.is_empty() && options.resident && repeat.is_none();
    let ir = check::validate(&raw, &kernels, req.spec_path, repeat, resident, &mut diags);
    if let (Some(ir), Some(dir)) = (&ir, options.record_dir) {
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
    write_by_name_args(&mut raw, &ir);
    let mut ir = ir;
    if chain.is_empty() && options.no_memory_plan {
        ir.plan_memory = false;
    }
    let waits_first = if chain.is_empty() && options.pdl_waits_first {
        vec![true; ir.nodes.len()]
    } else {
        check::pdl::proven_waits_first(&ir, options.record_dir)
    };
    let memory = memplan::plan(&ir, &branched, &waits_first);
    Ok((Analysis { ir, edges, schedule, serial, branched, serialized, memory }, raw))
}

/// Writes the arguments of `ir`'s nodes that were bound by name into `raw`'s `args`, so that a
/// spec including this one renames them as it renames written ones (left by name, they would
/// name the including spec's dims, buffers and scalars). `raw`'s nodes are `ir`'s, in order.
fn write_by_name_args(raw: &mut RawSpec, ir: &GraphIr) {
    for (node, bound) in raw.nodes.iter_mut().zip(&ir.nodes) {
        let mut by_name = bound.args.iter().filter(|a| a.by_name).peekable();
        // Only kernel nodes bind by name; an empty `args` on a memset, memcpy, collective or gemm
        // node would read as a kernel key it may not have.
        if by_name.peek().is_none() {
            continue;
        }
        let at = node.kernel.as_ref().map_or(node.span.clone(), |k| k.span.clone());
        let args = node.args.get_or_insert_with(|| S { v: Vec::new(), span: at.clone() });
        for a in by_name {
            let value = S { v: ArgValue::Str(a.param.clone(), None), span: at.clone() };
            args.v.push((S { v: a.param.clone(), span: at.clone() }, value));
        }
    }
}

/// Splices every `[[include]]` of `raw` (the last spec of `chain`) into it, in file order: the
/// one recursive rule by which includes, and so `repeat`'s loop, reach every nested node. Each
/// included spec is analyzed on its own first, its errors rendered in its own file with a note
/// naming this include; binding errors, cycles and a chain deeper than [`MAX_INCLUDE_DEPTH`] are
/// errors at the include.
fn splice_includes(
    raw: &mut RawSpec,
    req: &GraphRequest<'_>,
    record_dir: Option<&Path>,
    chain: &[&str],
    included: &mut Included,
    diags: &mut Ctxt,
) {
    let here = SourceMap::new(req.spec_path, req.spec_text);
    for inc in std::mem::take(&mut raw.includes) {
        let Some((name, path)) = include::header(&inc, diags) else { continue };
        if chain.contains(&path.v.as_str()) {
            let cycle: Vec<&str> = chain.iter().copied().chain([path.v.as_str()]).collect();
            diags.push(path.span.clone(), format!("include cycle: {}", cycle.join(" -> ")));
            continue;
        }
        if chain.len() > MAX_INCLUDE_DEPTH {
            diags.push(path.span.clone(), too_deep(chain, &path.v));
            continue;
        }
        let key = (path.v.clone(), chain.len());
        if !included.specs.contains_key(&key) {
            let text = match (req.read_file)(&path.v) {
                Ok(text) => text,
                Err(e) => {
                    let message = format!("cannot read included spec `{}` (relative to the crate root): {e}", path.v);
                    diags.push(path.span.clone(), message);
                    continue;
                }
            };
            let (line, col) = here.line_col(path.span.start);
            let at = format!("{}:{line}:{col}", req.spec_path);
            let analyzed = analyze_included(req, record_dir, chain, (&path.v, &text, &at), included);
            included.specs.insert(key.clone(), analyzed);
        }
        match &included.specs[&key] {
            Ok(sub) if raw.nodes.len() + sub.nodes.len() > MAX_SPLICED_NODES => {
                let message = format!(
                    "`[[include]]` of `{}` splices {} nodes into a spec of {}, above the limit of {MAX_SPLICED_NODES} nodes (a spec including another several times per level doubles its nodes at every level)",
                    path.v,
                    sub.nodes.len(),
                    raw.nodes.len()
                );
                diags.push(path.span.clone(), message);
            }
            Ok(sub) => {
                let sub = sub.clone();
                include::splice(raw, &inc, &name.v, &path, &sub, diags);
            }
            Err(rendered) => {
                for message in rendered {
                    diags.push(Location::Positioned, message.clone());
                }
            }
        }
        raw.includes.push(inc);
    }
}

/// The included spec at `path` (its `text`, included `at` a `file:line:col`) analyzed on its
/// own, its includes spliced; or its errors rendered in its own file, each of its own with a
/// note naming the include (those of specs it includes already name theirs).
fn analyze_included(
    req: &GraphRequest<'_>,
    record_dir: Option<&Path>,
    chain: &[&str],
    (path, text, at): (&str, &str, &str),
    included: &mut Included,
) -> Result<RawSpec, Vec<String>> {
    let sub_req = GraphRequest { spec_path: path, spec_text: text, struct_name: None, ..*req };
    let options = Options { record_dir, ..Options::default() };
    let errors = match analyze_in(&sub_req, &options, chain, included) {
        Ok((_, sub)) => return Ok(sub),
        Err(errors) => errors,
    };
    // `render_errors` puts the already positioned errors (of deeper specs) first.
    let deeper = errors.iter().filter(|e| matches!(e.location, Location::Positioned)).count();
    let rendered = SourceMap::new(path, text).render_errors(&errors).into_iter().enumerate();
    Err(rendered
        .map(|(i, e)| if i < deeper { e } else { format!("{e}\n  = note: `{path}` is included at {at}") })
        .collect())
}

/// The error at an include `MAX_INCLUDE_DEPTH` levels down that would include `path` one level
/// deeper.
fn too_deep(chain: &[&str], path: &str) -> String {
    let shown: Vec<&str> = if chain.len() > 6 {
        chain[..3].iter().copied().chain(["…"]).chain(chain[chain.len() - 2..].iter().copied()).collect()
    } else {
        chain.to_vec()
    };
    format!(
        "`[[include]]` of `{path}` nests {} levels deep ({} -> {path}), but at most {MAX_INCLUDE_DEPTH} levels of includes nest: include the deeper specs from a shallower one (or check for a chain that was meant to end)",
        chain.len(),
        shown.join(" -> "),
    )
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
/// ([`analyze_with_records`]).
pub fn generate_with_records(req: &GraphRequest<'_>, record_dir: Option<&Path>) -> Result<TokenStream, Vec<String>> {
    generate_with(req, &Options { record_dir, ..Options::default() })
}

/// [`generate`] with `options` ([`analyze_with`]): what `graph!` runs.
pub fn generate_with(req: &GraphRequest<'_>, options: &Options<'_>) -> Result<TokenStream, Vec<String>> {
    let a = analyze_with(req, options)?;
    let name = req.struct_name.clone().unwrap_or_else(|| graph_struct_ident(req.spec_path, Span::call_site()));
    let programmatic = a.branched.programmatic_edges();
    let doc = docs::struct_doc(&a.ir, &a.edges, &programmatic, &a.memory);
    let dot = a.dot(&name.to_string());
    let mermaid = a.mermaid();
    let mut tracked = vec![join(req.root, req.spec_path), join(req.root, &a.ir.kernel_source)];
    let mut resident_source = None;
    if let (true, Some(dir)) = (a.ir.resident, options.record_dir) {
        let built =
            crate::graph::resident::check_built(&a.ir, &a.edges, dir, options.kernel_dirs).map_err(|message| {
                let at = resident_key_in(req.spec_text).map_or(Location::SpecFile, Location::Spec);
                SourceMap::new(req.spec_path, req.spec_text).render_errors(&Errors::one(at, message))
            })?;
        tracked.push(built.clone());
        resident_source = Some(built);
    }
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
        memory: &a.memory,
        programmatic: &programmatic,
        tracked: &tracked,
        doc: &doc,
        dot: &dot,
        mermaid: &mermaid,
        resident_source: resident_source.as_deref(),
    }))
}

fn join(root: &str, rel: &str) -> String {
    if Path::new(rel).is_absolute() {
        rel.to_string()
    } else {
        format!("{}/{}", root.trim_end_matches('/'), rel)
    }
}

/// Where a checked spec says `resident = true`: the place of an error about the kernel the build
/// generated from it (the spec read again; it checked, so reading it reports nothing).
fn resident_key_in(text: &str) -> Option<std::ops::Range<usize>> {
    let mut diags = Ctxt::new();
    let raw = spec::read(text, &mut diags);
    let _ = diags.check();
    check::resident_key(&raw)
}
