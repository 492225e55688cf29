//! `kgraph::graph!("graphs/x.toml")`: a TOML graph spec, validated at compile time against the
//! kernels' `#[kernel]` declarations, becomes a struct that owns the buffers, launches the nodes
//! eagerly or as a captured CUDA graph with parallel branches, and updates scalars in place.
//!
//! The stages, each a folder or file using only the ones before it:
//! 1. [`spec`]: TOML → spanned raw model ([`spec::read()`]), with the diagnostics that turn byte
//!    offsets into `file:line:col` ([`spec::diag`]) and expressions over dims ([`spec::expr`]);
//! 2. [`check`]: names, dtypes, roles, expressions, arguments against the declared signatures,
//!    node order, usage, one function per rule, all errors collected → [`ir`];
//! 3. [`ir`]: the validated graph, and the names of what is generated for it;
//! 4. [`dataflow`]: dependencies, transitive reduction, stream schedule; [`memplan`]: the buffers
//!    that share one arena;
//! 5. [`emit`]: the struct's code, rustdoc ([`emit::docs`]) and diagrams ([`emit::diagram`]).
//!
//! [`analyze`] and [`generate`] run them for one [`GraphRequest`]; [`expand()`] is the macro.
//! The format is documented in `docs/graph-spec.md`.

pub mod check;
pub mod dataflow;
pub mod emit;
mod expand;
pub mod ir;
pub mod memplan;
mod pipeline;
pub mod plan;
pub mod resident;
pub mod spec;

pub use expand::{expand, MANIFEST_DIR_VAR};
pub use pipeline::{
    analyze, analyze_with, analyze_with_records, generate, generate_with, generate_with_records, once_each, Analysis,
    GraphRequest, Options, MAX_INCLUDE_DEPTH, MAX_SPLICED_NODES,
};
