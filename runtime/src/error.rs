//! kgraph's one error type. Every variant says what failed: the operation, and the kernel,
//! buffer, slot or graph node involved, with sizes where sizes matter.

use cudarc::driver::DriverError;

/// Everything that can go wrong in kgraph's runtime and generated code.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No CUDA driver library could be loaded on this machine.
    NoDriver {
        /// What the loader reported.
        detail: String,
    },
    /// The driver loaded, but there is no device with this ordinal.
    NoDevice {
        /// The ordinal that was asked for.
        ordinal: usize,
        /// How many devices the driver sees.
        count: usize,
    },
    /// A driver call failed.
    Driver {
        /// What kgraph was doing, e.g. `"allocate 4096 bytes for buffer `feat`"`.
        op: String,
        /// The driver's error.
        source: DriverError,
    },
    /// Loading a kernel module (cubin, or NVRTC-compiled source) failed.
    ModuleLoad {
        /// The `.cu` file the module was built from.
        file: &'static str,
        /// Why.
        detail: String,
    },
    /// A kernel was not found in its module.
    FunctionNotFound {
        /// The kernel's name.
        kernel: &'static str,
        /// The `.cu` file it should be in.
        file: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// A kernel launch failed (bad config, or an earlier asynchronous fault surfacing).
    Launch {
        /// The kernel's name.
        kernel: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// Host and device lengths disagree.
    LengthMismatch {
        /// Which buffer or operation.
        what: String,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// An index (slot, element) is out of range.
    OutOfRange {
        /// Which slot bus, buffer or table.
        what: String,
        /// The index asked for.
        index: usize,
        /// How many there are.
        len: usize,
    },
    /// Stream capture or graph execution failed.
    Graph {
        /// What was being done (`"begin capture"`, `"replay"`, a node name...).
        op: String,
        /// Why.
        detail: String,
    },
}

/// `Result` with kgraph's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps a driver error with the operation that failed.
    pub fn driver(op: impl Into<String>, source: DriverError) -> Self {
        Error::Driver { op: op.into(), source }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoDriver { detail } => write!(f, "no CUDA driver found: {detail}"),
            Error::NoDevice { ordinal, count } => {
                write!(f, "no CUDA device {ordinal}: the driver sees {count} device(s)")
            }
            Error::Driver { op, source } => write!(f, "{op}: {source}"),
            Error::ModuleLoad { file, detail } => write!(f, "loading kernel module {file}: {detail}"),
            Error::FunctionNotFound { kernel, file, source } => {
                write!(f, "kernel `{kernel}` not found in module {file}: {source}")
            }
            Error::Launch { kernel, source } => write!(f, "launching kernel `{kernel}`: {source}"),
            Error::LengthMismatch { what, expected, actual } => {
                write!(f, "{what}: length mismatch, expected {expected} elements, got {actual}")
            }
            Error::OutOfRange { what, index, len } => {
                write!(f, "{what}: index {index} out of range (len {len})")
            }
            Error::Graph { op, detail } => write!(f, "graph {op}: {detail}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver { source, .. } | Error::FunctionNotFound { source, .. } | Error::Launch { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}
