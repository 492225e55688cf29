//! The compiled-kernel record, `$OUT_DIR/kgraph/<stem>.kernels`: what nvcc actually compiled
//! from `<stem>.cu`, read from the PTX of the same nvcc invocation that produced the cubin (see
//! [`crate::records_from_ptx`]). The format, its writer and its parser live in the small
//! `kgraph-record` crate, which `#[kernel]` (kgraph-codegen) reads it with too; its docs give
//! the format. This module re-exports them, with the parser's error as a [`BuildError`].

pub use kgraph_record::record::{
    format_kernel_record, CallRecord, KernelRecord, ParamRecord, PtrSpace, RecordError, SharedRecord, RECORD_HEADER,
};

use crate::error::BuildError;

/// Reads a record file (`kgraph_record::record` gives the format) into its kernels, in file
/// order. [`BuildError::BadKernelRecord`] names the first malformed line.
pub fn parse_kernel_record(text: &str) -> Result<Vec<KernelRecord>, BuildError> {
    kgraph_record::parse_kernel_record(text)
        .map_err(|RecordError { line, message }| BuildError::BadKernelRecord { line, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_records_are_build_errors_naming_the_line() {
        match parse_kernel_record("kgraph-kernels 2\n") {
            Err(BuildError::BadKernelRecord { line: 1, .. }) => {}
            other => panic!("expected BadKernelRecord at line 1, got {other:?}"),
        }
    }
}
