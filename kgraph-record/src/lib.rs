//! What kgraph's build leaves beside each cubin for kgraph's macros to read, as a tiny crate
//! both sides share (`kgraph-build` writes, `kgraph-codegen` reads), so the format has one
//! parser:
//!
//! - [`record`]: the compiled-kernel record `<stem>.kernels` (format, writer, parser);
//! - [`preprocessed`]: the line markers of the preprocessed device source `<stem>.i`;
//! - [`cuda`]: the device headers of kgraph's resident loops, which the runtime hands to users
//!   and the build writes beside the resident kernels it generates from graph specs.
//!
//! No dependencies: it is a build-dependency of every crate with kernels (through
//! `kgraph-build`) and a dependency of the proc-macro crate.

pub mod preprocessed;
pub mod record;

/// kgraph's device headers, as text: one copy for the runtime (`kgraph::resident::HEADER`) and
/// the build (which writes them beside a generated resident kernel).
pub mod cuda {
    /// `kg_resident.cuh`: the one-block resident loop and the doorbell layout.
    pub const RESIDENT_HEADER: &str = include_str!("cuda/kg_resident.cuh");
    /// `kg_resident_grid.cuh`: the grid-wide resident loop (it includes `kg_resident.cuh`).
    pub const RESIDENT_GRID_HEADER: &str = include_str!("cuda/kg_resident_grid.cuh");
}

pub use preprocessed::{line_marker, original_line, LineMap, SourceLine};
pub use record::{
    format_kernel_record, parse_kernel_record, CallRecord, KernelRecord, ParamRecord, PtrSpace, RecordError,
    SharedRecord, RECORD_HEADER,
};
