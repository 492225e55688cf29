//! What kgraph's build leaves beside each cubin for kgraph's macros to read, as a tiny crate
//! both sides share (`kgraph-build` writes, `kgraph-codegen` reads), so the format has one
//! parser:
//!
//! - [`record`]: the compiled-kernel record `<stem>.kernels` (format, writer, parser);
//! - [`preprocessed`]: the line markers of the preprocessed device source `<stem>.i`.
//!
//! No dependencies: it is a build-dependency of every crate with kernels (through
//! `kgraph-build`) and a dependency of the proc-macro crate.

pub mod preprocessed;
pub mod record;

pub use preprocessed::{line_marker, original_line, LineMap, SourceLine};
pub use record::{
    format_kernel_record, parse_kernel_record, CallRecord, KernelRecord, ParamRecord, PtrSpace, RecordError,
    SharedRecord, RECORD_HEADER,
};
