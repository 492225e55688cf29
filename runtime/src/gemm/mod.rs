//! Dense matrix products through cuBLAS (cargo feature `gemm`): row-major [`Gemm`]s issued on a
//! stream or captured into a CUDA graph, for graph specs' `gemm` nodes (docs/graph-spec.md).
//!
//! - [`Gemm`]: one row-major product `C = alpha * op(A) * op(B) + beta * C`, or a strided
//!   batch, in f32 (IEEE or TF32 [`Compute`], chosen explicitly), f16 or bf16 (f32
//!   accumulation); [`Gemm::required_lens`] is the extents proof the graph macro also makes at
//!   compile time.
//! - [`Blas`]: a cuBLAS handle with workspaces it owns (`cublasSetWorkspace`, one per GEMM that
//!   may run at once), [`Blas::issue_raw`] and [`Blas::capture_graph`] for graph builders.
//! - cuBLAS is loaded at run time (`KGRAPH_CUBLAS_LIB`, then `libcublas.so.13`/`.12` through
//!   the loader's path, the CUDA toolkit's `lib64` and Python's `nvidia/cublas/lib`); when it
//!   is missing, [`Blas::new`] returns one [`GemmError::Missing`](crate::GemmError::Missing)
//!   saying what was tried.

mod blas;
mod desc;
mod sys;

pub use blas::{Blas, GemmGraph};
pub use desc::{Batch, Compute, Gemm, GemmType};
pub use sys::{search_dirs, LIBRARY_ENV, LIBRARY_NAMES};
