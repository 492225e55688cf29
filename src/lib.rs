//! kgraph: typed Rust bindings and CUDA Graphs for your own CUDA kernels.

extern crate self as kgraph;

/// `#[kernel]` binds one CUDA kernel; `#[kernels]` makes a registry module of them;
/// `graph!` turns a TOML graph spec into a graph struct.
pub use kgraph_macros::{graph, kernel, kernels};
pub use kgraph_runtime::*;

pub mod gradcheck;
pub mod graphs;
pub mod model;
