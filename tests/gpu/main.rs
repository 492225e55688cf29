//! The GPU suite: one test binary (so the device bundle stays small), one module per area. The
//! runtime's own GPU tests (transfers, slots, graphs, the run-time safety checks) are
//! `runtime/gpu-tests/tests/gpu/`.
//! Every test here is `#[ignore = "needs a CUDA GPU"]`: CI compiles and lists them; the GPU
//! machine runs them with `--ignored` (`../shared/gpu-bundle`, then `bash .gpu/run`).

mod block_bound;
mod capture_guard;
mod capture_threads;
mod common;
mod extents;
mod gemm; // kgraph's `gemm` feature is on for this package (Cargo.toml)
mod graph;
mod graph_control;
mod graph_include;
mod graph_nccl;
mod graph_pdl;
mod graph_reload;
mod kernel_args;
mod memory_plan;
mod misuse;
mod mixed;
mod mlp;
mod model_adamw;
mod model_bce;
mod model_cfc;
mod model_chain;
mod model_fused;
mod model_graphs;
mod model_heads;
mod model_snap;
mod model_train_fused;
mod model_train_fused_adamw;
mod model_train_graphs;
mod model_util;
mod nccl; // kgraph's `nccl` feature is on for this package (Cargo.toml)
mod nullable;
mod ppo;
mod ppo_fused;
mod ppo_update;
mod requires;
mod resident;
mod resident_grid;
mod resident_spec;
mod rows;
mod smoke;
mod types;
mod verified;

/// The model's kernel module at the path its specs name (`crate::model::kernels`), so
/// `memory_plan` can build its own structs from the model's specs (`ppo` re-exports the PPO one).
mod model {
    pub use kgraph_model::model::kernels;
}
