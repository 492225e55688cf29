//! kgraph: typed Rust bindings and CUDA Graphs for your own CUDA kernels.
//!
//! `#[kernel("x.cu")]` binds one kernel of your crate's `kernels/` folder, `#[kernels]` makes a
//! registry module of them, and `graph!("graphs/x.toml")` turns a TOML graph spec into a graph
//! struct; the runtime (device, mapped-pinned transfers, pinned slots, graph execution) is
//! re-exported here. Your crate's `build.rs` compiles its kernels with `kgraph_build`; this
//! crate compiles none.

/// `#[kernel]` binds one CUDA kernel; `#[kernels]` makes a registry module of them;
/// `graph!` turns a TOML graph spec into a graph struct; `#[derive(DeviceStruct)]` makes a
/// `#[repr(C)]` struct a kernel argument.
pub use kgraph_macros::{graph, kernel, kernels, DeviceStruct};
pub use kgraph_runtime::*;

pub mod gradcheck;
pub mod rng;
