//! Checks a raw spec against itself and the kernels' `#[kernel]` declarations and builds the
//! validated [`GraphIr`]. Every problem is recorded (nothing stops at the first error); what
//! cannot be resolved is skipped so one mistake yields one message, not a cascade.
//!
//! One module per group of rules, in the order they run: `declare` (the `[kernels]` table,
//! dims, buffers, scalars), [`names`] (what they generate must not clash), `bind` (each node
//! against its kernel's signature, with `launch` for its launch configuration and
//! `block_bound` for its kernel's declared `max_block`, `requires` for its `requires(...)`), `extents`
//! (every launch within its kernel's declared extents and thread limit), `module` (the
//! `[kernels] module` path against the declarations' source), `control` (`[[while]]`/`[[if]]`
//! bodies and conditions), `usage` (node order, everything used), `repeat` (the loop of
//! `graph!(.., repeat = K)` around every node), `resident` (what `resident = true` needs). `context` is the state they share, `values` the typed constants. [`pdl`] runs after
//! validation, against the compiled-kernel records (PDL nodes need a proven wait).
//! Nothing here depends on code generation.

mod bind;
mod block_bound;
mod collective;
mod context;
mod control;
mod copies;
mod declare;
mod extents;
mod gemm;
mod launch;
mod module;
pub mod names;
pub mod pdl;
mod repeat;
mod requires;
mod resident;
mod usage;
mod values;

use std::num::NonZeroU32;

use context::Ctx;
pub use repeat::REPEAT_LOOP;

use crate::diagnostics::Ctxt;
use crate::graph::ir::{GraphIr, Include};
use crate::graph::spec::RawSpec;
use crate::syntax::model::KernelDecl;
use crate::syntax::source::SourceDecl;

/// What is known of the kernel declarations when validating.
#[derive(Debug, Clone)]
pub enum Kernels {
    /// Declarations read from the spec's `[kernels] source`, with the inline modules of each.
    Loaded(Vec<SourceDecl>),
    /// They could not be read (already reported): kernel-dependent checks are skipped.
    Unavailable,
}

/// Validates `raw` against `kernels`, with every node in one loop of `repeat` iterations when
/// given (`graph!(.., repeat = K)`); `None` when anything is wrong (all reported in `diags`).
pub fn validate(
    raw: &RawSpec,
    kernels: &Kernels,
    spec_path: &str,
    repeat: Option<NonZeroU32>,
    resident: bool,
    diags: &mut Ctxt,
) -> Option<GraphIr> {
    let errors_before = diags.len();
    let mut cx = Ctx::new(diags);
    let (kernel_source, module) = declare::kernels_table(&mut cx, raw);
    let dims = declare::dims(&mut cx, raw);
    let buffers = declare::buffers(&mut cx, raw);
    let scalars = declare::scalars(&mut cx, raw);
    names::check_generated_names(&mut cx, &dims, &buffers.items, &scalars.items);

    let found = match kernels {
        Kernels::Loaded(d) => d.as_slice(),
        Kernels::Unavailable => return None,
    };
    let decls: Vec<KernelDecl> = found.iter().map(|d| d.decl.clone()).collect();
    let env = bind::Env::new(&decls, &buffers.items, &scalars.items);
    let bound = bind::bind_nodes(&mut cx, raw, &env);
    extents::extents_fit_buffers(
        &mut cx,
        &bound.nodes,
        &bound.kernels,
        &bound.arg_spans,
        &buffers.items,
        &scalars.items,
    );
    if let (Some(k), Some(path)) = (&raw.kernels, &module) {
        module::module_matches_source(&mut cx, k, path, &kernel_source, &bound.kernels, found);
    }
    // Order and usage are whole-graph properties: judged only when every node bound (else a
    // node that failed would make its buffers look unused or unwritten).
    let controls = if bound.nodes.len() == raw.nodes.len() {
        let controls = control::controls(&mut cx, raw, &bound, &env);
        let conditions: Vec<usize> = controls.iter().filter_map(|c| c.condition_buffer()).collect();
        let lists = (&buffers.items[..], &buffers.spans[..], &scalars.items[..], &scalars.spans[..]);
        usage::check_usage(&mut cx, &bound, lists, &conditions);
        let looped = repeat.and_then(|k| repeat::repeat_all(&mut cx, raw, &bound, k));
        let controls: Vec<_> = controls.into_iter().chain(looped).collect();
        if let (true, Some(at)) = (resident, resident_key(raw)) {
            let buffers = (&buffers.items[..], &buffers.spans[..]);
            resident::check_lowerable(&mut cx, raw, &at, (&bound.nodes, &bound.kernels), buffers, &controls);
        }
        controls
    } else {
        Vec::new()
    };
    if cx.diags.len() > errors_before {
        return None;
    }
    Some(GraphIr {
        spec_path: spec_path.to_string(),
        doc: raw.doc.clone(),
        kernel_source,
        module: module?,
        dims,
        buffers: buffers.items,
        scalars: scalars.items,
        kernels: bound.kernels,
        nodes: bound.nodes,
        controls,
        includes: raw.included.iter().map(|f| Include { name: f.name.clone(), spec: f.spec.clone() }).collect(),
        plan_memory: raw.plan_memory.as_ref().map_or(true, |p| p.v),
        resident: resident && resident_key(raw).is_some(),
    })
}

/// The span of `resident = true`, when the spec says so.
pub(crate) fn resident_key(raw: &RawSpec) -> Option<crate::graph::spec::Span> {
    raw.resident.as_ref().filter(|r| r.v).map(|r| r.span.clone())
}
