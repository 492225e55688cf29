//! kgraph's reference trading model, written with kgraph as any user crate would be: the
//! kernels of `kernels/*.cu` declared in [`model`], the two graphs of `graphs/*.toml` in
//! [`graphs`], and a synthetic order-book source in [`graphs::synthetic`]; [`mlp`] is the MLP
//! example's network (cuBLAS GEMM nodes and its own kernels in one train-step graph). The
//! examples, the benches and the GPU suite of this workspace use it; no crate that depends on
//! `kgraph` compiles any of it.

pub mod graphs;
pub mod mlp;
pub mod model;
pub mod ppo;
pub mod resident;
