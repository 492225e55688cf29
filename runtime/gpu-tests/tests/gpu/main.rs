//! kgraph-runtime's GPU tests: transfers through mapped pinned staging, pinned slots, the slot
//! bus and graphs (`runtime`), and the run-time half of kgraph's safety (`safety`). Kernels:
//! `kernels/test_runtime.cu`, compiled by this crate's build script. Every test here is
//! `#[ignore = "needs a CUDA GPU"]`: `cargo test --workspace` compiles and lists them; the GPU
//! machine runs them with `--ignored` (docs/contributing.md). The framework's end-to-end GPU
//! suite (generated kernels and graphs) is the workspace root's `tests/gpu`.

mod common;
mod runtime;
mod safety;
mod soundness;
