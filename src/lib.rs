//! kgraph: typed Rust bindings and CUDA Graphs for your own CUDA kernels.

extern crate self as kgraph;

pub use kgraph_runtime::*;
