//! kgraph's macro logic as an ordinary library, so it is unit- and snapshot-tested without a
//! compiler in the loop. The proc-macro crate `kgraph-macros` is a thin shell over it.
//!
//! By stage, each folder using only the ones before it:
//! - [`syntax`]: the front end both generators share: the typed [`syntax::model`] of
//!   `#[kernel]` declarations (with spans), their parser, [`decls_from_source`] (the
//!   declarations of a Rust file, for graph specs), and the naming and text rules;
//! - [`cuda`]: the CUDA source reader: a kernel's signature from the `.cu` text (no
//!   preprocessor, no compiler);
//! - [`kernel`]: the `#[kernel]` binding in the style of serde_derive: parse → check the
//!   declaration against the `.cu` (every mismatch a spanned error) → emit the handle struct
//!   over cudarc's `launch_builder`; [`expand_kernel`] and [`expand_kernels`] run it;
//! - [`graph`]: the `graph!` pipeline: read the TOML spec → check it against the declarations
//!   → the validated IR → dataflow (dependencies, capture schedule) → emit the graph struct;
//!   checking never depends on emitting.
//!
//! - [`derive`](mod@derive): `#[derive(kgraph::DeviceStruct)]` (a `#[repr(C)]` twin of a kernel's C struct).
//!
//! [`diagnostics`] is the one error collector every stage pushes into ([`diagnostics::Ctxt`],
//! serde_derive's model); `emit_util` holds the token helpers both emitters use (doc attributes).

pub mod compiled;
pub mod cuda;
pub mod derive;
pub mod diagnostics;
mod emit_util;
pub mod graph;
pub mod kernel;
pub mod syntax;

/// The `.cu` signature reader under its former path (`kgraph_codegen::cu_sig`), which the
/// fuzz targets use.
pub use cuda::signature as cu_sig;
pub use derive::device_struct::expand as derive_device_struct;
pub use kernel::config::Config;
pub use kernel::declare::{suggest_declarations, Declaration, Suggestion};
pub use kernel::expand::{check_kernel, check_kernels, expand_kernel, expand_kernels};
pub use kernel::source_check::{check_rust_source, SourceCheck};
pub use syntax::naming::kernel_handle_ident;
pub use syntax::source::decls_from_source;
