//! The error type's structure, on any machine: nested enums match as groups, convert with `?`,
//! chain their sources, and keep the messages' wording.

use cudarc::driver::{sys::CUresult, DriverError};
use kgraph_runtime::{Error, GraphError, LaunchError, MemoryError, ModuleError, Result, SetupError};
use std::error::Error as _;

fn refused() -> Result<()> {
    // A nested error converts into `Error` with `?`.
    Err(LaunchError::PdlWithoutWait { kernel: "k" })?
}

#[test]
fn a_refused_launch_matches_as_a_group() {
    let errors = [
        refused().unwrap_err(),
        LaunchError::Extent { kernel: "k", param: "x", required: 8, actual: 4 }.into(),
        LaunchError::ForeignStream { kernel: "Device::upload_into", param: "dst" }.into(),
    ];
    for e in &errors {
        assert!(matches!(e, Error::Launch(_)), "{e:?}");
        assert!(e.source().is_none(), "a refusal has no underlying error: {e:?}");
    }
    let driver = Error::LaunchFailed { kernel: "k", source: DriverError(CUresult::CUDA_ERROR_LAUNCH_FAILED) };
    assert!(!matches!(driver, Error::Launch(_)));
}

#[test]
fn sources_chain_through_nested_enums_and_graph_steps() {
    let missing = ModuleError::FunctionNotFound {
        kernel: "k",
        file: "k.cu",
        source: DriverError(CUresult::CUDA_ERROR_NOT_FOUND),
    };
    let e = Error::in_graph("Model", "load kernel `k`", missing.into());
    let inner = e.source().expect("InGraph's source is the error that stopped the step");
    // The source is the boxed inner error (as `thiserror` hands out a `Box<Error>` field).
    let inner = inner.downcast_ref::<Box<Error>>().expect("the inner error is kgraph's Error");
    assert!(matches!(**inner, Error::Module(ModuleError::FunctionNotFound { kernel: "k", .. })));
    // `Error::Module` is transparent: its source is the driver error itself.
    assert!(inner.source().and_then(|s| s.downcast_ref::<DriverError>()).is_some());
    assert!(e.to_string().starts_with("Model: load kernel `k`: kernel `k` not found in module k.cu: "), "{e}");
}

#[test]
fn messages_keep_their_wording() {
    let cases: Vec<(Error, &str)> = vec![
        (
            SetupError::DriverTooOld { found: 12040, required: 13000 }.into(),
            "the CUDA driver supports CUDA 12.4, kgraph needs 13.0 or newer (update the NVIDIA driver)",
        ),
        (
            ModuleError::ParamMismatch { kernel: "k", index: 2, expected: Some(8), found: None }.into(),
            "loading kernel `k`: parameter 2 is no parameter in the loaded module, 8 bytes in the declaration",
        ),
        (
            LaunchError::Extent { kernel: "k", param: "x", required: 8, actual: 4 }.into(),
            "launching kernel `k`: argument `x` holds 4 elements, its extent requires 8",
        ),
        (
            MemoryError::LengthMismatch { what: "upload_into".into(), expected: 4, actual: 5 }.into(),
            "upload_into: length mismatch, expected 4 elements, got 5",
        ),
        (Error::graph("replay", "the graph is empty"), "graph replay: the graph is empty"),
        (
            GraphError::ScalarBreaksExtent {
                graph: "G",
                scalar: "n",
                node: "a",
                param: "x",
                expr: "n * 2",
                buffer: "buf",
                required: Some(10),
                len: 8,
            }
            .into(),
            "G::set_n: refused (nothing changed): the extent `n * 2` of `x` in node `a` would be 10 elements, but buffer `buf` holds 8",
        ),
        (
            GraphError::ScalarBreaksExtent {
                graph: "G",
                scalar: "n",
                node: "a",
                param: "x",
                expr: "n * 2",
                buffer: "buf",
                required: None,
                len: 8,
            }
            .into(),
            "G::set_n: refused (nothing changed): the extent `n * 2` of `x` in node `a` could not be evaluated (it overflows the C type it is computed in, divides by zero, or is negative); buffer `buf` holds 8",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
    }
}

#[cfg(feature = "nccl")]
#[test]
fn nccl_messages_name_the_rank_when_known() {
    use kgraph_runtime::NcclError;
    let known: Error = NcclError::Bootstrap { rank: Some(1), detail: "RANK is not set".into() }.into();
    assert_eq!(known.to_string(), "rank 1: bootstrap: RANK is not set");
    let unknown: Error = NcclError::Bootstrap { rank: None, detail: "RANK is not set".into() }.into();
    assert_eq!(unknown.to_string(), "bootstrap: RANK is not set");
    let shape = NcclError::CollectiveLength {
        collective: "all_gather",
        rank: None,
        world_size: 2,
        send_len: 3,
        recv_len: 5,
        rule: "receive length must be world_size x send length",
    };
    assert_eq!(
        Error::from(shape).to_string(),
        "all_gather over 2 ranks: receive length must be world_size x send length (send buffer 3 elements, receive buffer 5); nothing was issued"
    );
}
