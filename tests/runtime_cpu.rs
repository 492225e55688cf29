//! Runtime checks that need no GPU: the no-HtoD rule, error messages, and device opening on a
//! machine with or without a driver.

use std::path::{Path, PathBuf};

use kgraph::cudarc::driver::{sys, DriverError};
use kgraph::{Device, Error, MemoryError, SetupError};

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// kgraph moves host data only through mapped pinned staging and device-to-device copies
/// (`Device::upload`); a plain host-to-device copy anywhere in the runtime is a regression.
#[test]
fn runtime_has_no_plain_host_to_device_copy() {
    const FORBIDDEN: [&str; 5] = ["memcpy_htod", "clone_htod", "cuMemcpyHtoD", "memcpy_stod", "htod_async"];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime/src");
    let files = rust_files(&src);
    let names: Vec<String> = files.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    // Guard against scanning the wrong folder and passing vacuously.
    for expected in ["lib.rs", "transfer.rs", "device.rs"] {
        assert!(names.iter().any(|n| n == expected), "{expected} not found under {}", src.display());
    }
    let mut hits = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line_no, line) in text.lines().enumerate() {
            for word in FORBIDDEN {
                if line.to_lowercase().contains(&word.to_lowercase()) {
                    hits.push(format!("{}:{}: `{word}`: {}", file.display(), line_no + 1, line.trim()));
                }
            }
        }
    }
    assert!(hits.is_empty(), "plain HtoD copies in runtime/src (use Device::upload):\n{}", hits.join("\n"));
}

#[test]
fn device_new_reports_a_missing_driver_or_device_without_panicking() {
    // SAFETY: only asks the dynamic loader whether libcuda can be opened.
    let driver_loads = unsafe { sys::is_culib_present() };
    match Device::new(0) {
        Ok(_) => assert!(driver_loads, "a device opened without a loadable driver"),
        Err(Error::Setup(SetupError::NoDriver { detail })) => assert!(!detail.is_empty()),
        Err(Error::Setup(SetupError::NoDevice { ordinal: 0, count: 0 }))
        | Err(Error::Setup(SetupError::DriverTooOld { .. })) => {
            assert!(driver_loads, "the driver cannot report devices or its version without loading")
        }
        Err(other) => panic!("unexpected error opening device 0: {other}"),
    }
    if !driver_loads {
        assert!(matches!(Device::new(0), Err(Error::Setup(SetupError::NoDriver { .. }))));
    }
    // No machine has this many devices.
    match Device::new(usize::MAX) {
        Err(Error::Setup(SetupError::NoDevice { ordinal, count })) => assert!(ordinal == usize::MAX && count < ordinal),
        Err(Error::Setup(SetupError::NoDriver { .. })) => assert!(!driver_loads || Device::new(0).is_err()),
        Err(Error::Setup(SetupError::DriverTooOld { .. })) => assert!(driver_loads),
        other => panic!("device usize::MAX must not open: {other:?}"),
    }
}

#[test]
fn error_messages_name_what_failed() {
    let cases: Vec<(Error, &[&str])> = vec![
        (
            Error::Setup(SetupError::NoDriver { detail: "libcuda.so missing".into() }),
            &["no CUDA driver", "libcuda.so missing"],
        ),
        (Error::Setup(SetupError::DriverTooOld { found: 12040, required: 13000 }), &["CUDA 12.4", "13.0"]),
        (Error::Setup(SetupError::NoDevice { ordinal: 3, count: 1 }), &["device 3", "1 device"]),
        (
            Error::driver(
                "upload_into: cuMemcpyDtoDAsync of 64 bytes",
                DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE),
            ),
            &["upload_into", "64 bytes", "CUDA_ERROR_INVALID_VALUE"],
        ),
        (
            Error::LaunchFailed { kernel: "cfc_step", source: DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_FAILED) },
            &["cfc_step", "CUDA_ERROR_LAUNCH_FAILED"],
        ),
        (
            Error::Memory(MemoryError::LengthMismatch { what: "download_into".into(), expected: 4, actual: 3 }),
            &["download_into", "expected 4", "got 3"],
        ),
        (
            Error::Memory(MemoryError::OutOfRange { what: "slot bus `controls`".into(), index: 9, len: 7 }),
            &["controls", "9", "7"],
        ),
        (
            Error::Memory(MemoryError::SizeOverflow { what: "upload".into(), len: usize::MAX, elem_bytes: 8 }),
            &["upload", "8 bytes"],
        ),
        (Error::graph("replay", "the graph is empty"), &["replay", "empty"]),
    ];
    for (error, needles) in cases {
        let text = error.to_string();
        for needle in needles {
            assert!(text.contains(needle), "`{text}` should mention `{needle}`");
        }
    }
}

#[test]
fn driver_errors_keep_their_source() {
    use std::error::Error as _;
    let e = Error::driver("graph replay", DriverError(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
    let source = e.source().expect("a driver error has a source");
    assert!(source.downcast_ref::<DriverError>().is_some());
    assert!(Error::graph("replay", "empty").source().is_none());
}

#[test]
fn byte_sizes_that_overflow_are_errors() {
    assert_eq!(Error::byte_len::<u32>("upload", 1000).unwrap(), 4000);
    assert_eq!(Error::byte_len::<[u8; 0]>("upload", usize::MAX).unwrap(), 0);
    match Error::byte_len::<u64>("upload", usize::MAX / 4) {
        Err(Error::Memory(MemoryError::SizeOverflow { what, len, elem_bytes: 8 })) => {
            assert_eq!((what.as_str(), len), ("upload", usize::MAX / 4))
        }
        other => panic!("expected SizeOverflow, got {other:?}"),
    }
    // Sizes past isize::MAX are refused too (no allocation can be that large).
    assert!(Error::byte_len::<u8>("alloc", usize::MAX).is_err());
}
