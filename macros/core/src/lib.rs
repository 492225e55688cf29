//! kgraph's macro logic as an ordinary library, so it is unit- and snapshot-tested without a
//! compiler in the loop. The proc-macro crate `kgraph-macros` is a thin shell over it.
//!
//! The `#[kernel]` pipeline, in the style of serde_derive:
//! 1. `parse`: the declaration (a body-less `fn`) into the typed [`model`], with spans;
//! 2. [`cu_sig`]: the kernel's signature from the `.cu` text (no preprocessor, no compiler);
//! 3. `check`: one against the other, every mismatch a spanned error;
//! 4. `codegen`: the handle struct over cudarc's `launch_builder`, with `quote!`.
//!
//! [`expand_kernel`] and [`expand_kernels`] run it for the two attribute macros.
//! [`decls_from_source`] gives other generators (graph specs) the declarations of a Rust file
//! without reading any `.cu`.

mod check;
mod codegen;
mod cu_lex;
pub mod cu_sig;
mod expand;
pub mod graph;
pub mod model;
mod parse;
mod source;

pub use expand::{expand_kernel, expand_kernels, Config};
pub use parse::kernel_handle_ident;
pub use source::decls_from_source;
