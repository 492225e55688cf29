//! What the graph emitters read: the validated graph and what was derived from it.

use syn::Ident;

use crate::graph::dataflow::{Edge, Schedule};
use crate::graph::ir::GraphIr;
use crate::graph::memplan::MemoryPlan;
use crate::graph::plan::BuildPlan;

/// Everything codegen needs besides the IR.
pub struct CodegenInput<'a> {
    /// The validated graph.
    pub ir: &'a GraphIr,
    /// The struct's name.
    pub name: &'a Ident,
    /// Reduced dependency edges.
    pub edges: &'a [Edge],
    /// Stream-capture schedule of `capture_streamed()` (dataflow branches on side streams).
    pub schedule: &'a Schedule,
    /// Build plan of `capture()` (the reduced dataflow).
    pub branched: &'a BuildPlan,
    /// Build plan of `capture_serialized()` and `profile()` (file order).
    pub serialized: &'a BuildPlan,
    /// Which buffers share the arena, and where.
    pub memory: &'a MemoryPlan,
    /// The edges `capture()` makes programmatic (PDL).
    pub programmatic: &'a [(usize, usize)],
    /// Files to track with `include_bytes!` (absolute paths), so edits re-run the macro.
    pub tracked: &'a [String],
    /// Struct rustdoc.
    pub doc: &'a str,
    /// DOT source.
    pub dot: &'a str,
    /// Mermaid source.
    pub mermaid: &'a str,
    /// The resident kernel's source the build generated, as `graph!` found it equal to its own
    /// lowering (its cubin beside it): what `into_resident` embeds. `None` without a record
    /// folder (the kernel is then named by `$OUT_DIR`).
    pub resident_source: Option<&'a str>,
}
