//! kgraph: typed Rust bindings and CUDA Graphs for your own CUDA kernels.

extern crate self as kgraph;

pub use kgraph_runtime::*;
/// `#[kernel]` binds one CUDA kernel; `#[kernels]` makes a registry module of them.
pub use kgraph_macros::{kernel, kernels};

pub mod gradcheck;
pub mod model;
