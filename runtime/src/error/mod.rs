//! kgraph's errors: one [`Error`] whose variants are the domains (setting CUDA up, driver calls,
//! kernel modules, refused launches, memory, graphs, NCCL), each domain a nested enum callers
//! can match as a group (`Err(Error::Launch(_))`: kgraph refused the launch, nothing ran). Every
//! message says what failed: the operation, and the kernel, buffer, slot or graph node involved,
//! with sizes where sizes matter. Errors that wrap another (a driver error, an error inside a
//! graph struct's step) return it from [`std::error::Error::source`].

use cudarc::driver::DriverError;
use std::fmt;

mod graph;
mod launch;
mod library;

pub use graph::{GraphError, MemoryError, WaitError};
pub use launch::{LaunchError, ModuleError};
#[cfg(feature = "gemm")]
pub use library::GemmError;
#[cfg(feature = "nccl")]
pub use library::NcclError;

/// Everything that can go wrong in kgraph's runtime and generated code.
///
/// | variant | what | nested enum |
/// | --- | --- | --- |
/// | [`Error::Setup`] | no driver, a driver too old, no such device, an SM split it cannot make | [`SetupError`] |
/// | [`Error::Driver`] | a driver call failed (its [`DriverError`] is the source) | |
/// | [`Error::LaunchFailed`] | the driver refused a kernel launch, or an earlier fault surfaced | |
/// | [`Error::Module`] | loading a kernel module or function, parameter sizes | [`ModuleError`] |
/// | [`Error::Launch`] | kgraph refused a launch (or copy) before issuing it | [`LaunchError`] |
/// | [`Error::Memory`] | lengths, sizes and indices of buffers | [`MemoryError`] |
/// | [`Error::Graph`] | capture, build, replay and update of graphs | [`GraphError`] |
/// | [`Error::Wait`] | a spinning wait (resident kernel, done word) that got no answer | [`WaitError`] |
/// | [`Error::InGraph`] | any of these, inside a step of a generated graph struct | |
/// | `Error::Nccl` (feature `nccl`) | NCCL, bootstrap and collective shapes | `NcclError` |
/// | `Error::Gemm` (feature `gemm`) | cuBLAS: loading it, a GEMM's shape, a failed call | `GemmError` |
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// CUDA could not be set up: no driver, a driver too old, no such device, or an SM split
    /// ([`Device::split_sms`](crate::Device::split_sms)) the device cannot make.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// A driver call failed.
    #[error("{op}: {}", DriverErrorText(.source))]
    Driver {
        /// What kgraph was doing, e.g. `"allocate 4096 bytes for buffer `feat`"`.
        op: String,
        /// The driver's error.
        source: DriverError,
    },
    /// The driver refused a kernel launch (bad config), or an earlier asynchronous fault
    /// surfaced at it. A launch kgraph's own checks refuse is [`Error::Launch`].
    #[error("launching kernel `{kernel}`: {}", DriverErrorText(.source))]
    LaunchFailed {
        /// The kernel's name.
        kernel: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// Loading a kernel module or function failed, or its parameters differ from the declaration.
    #[error(transparent)]
    Module(#[from] ModuleError),
    /// kgraph refused a launch (or copy) before issuing it: nothing was launched.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// A length, size or index of a buffer, view or slot does not fit.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// Capturing, building, replaying or updating a graph failed.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// A host wait that spins on a word the device writes (a resident kernel's done sequence,
    /// a replay's done word) got no answer, or the resident kernel is stopped.
    #[error(transparent)]
    Wait(#[from] WaitError),
    /// A step of a generated graph struct failed (allocating a buffer, loading a kernel);
    /// `source` is the underlying error, kept whole so callers can match on it (through
    /// [`std::error::Error::source`] it is the `Box<Error>`).
    #[error("{graph}: {op}: {source}")]
    InGraph {
        /// The graph struct's name.
        graph: &'static str,
        /// What was being done, e.g. `"allocate state buffer `h` (64 x f32)"`.
        op: String,
        /// The error that stopped it.
        source: Box<Error>,
    },
    /// NCCL, a multi-rank job's bootstrap, or a collective's buffer lengths.
    #[cfg(feature = "nccl")]
    #[error(transparent)]
    Nccl(#[from] NcclError),
    /// cuBLAS could not be loaded, a GEMM's shape does not fit its buffers, or a cuBLAS call
    /// failed.
    #[cfg(feature = "gemm")]
    #[error(transparent)]
    Gemm(#[from] GemmError),
}

/// `Result` with kgraph's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// CUDA could not be set up ([`Error::Setup`]), or a device not split as asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// No CUDA driver library could be loaded on this machine.
    #[error("no CUDA driver found: {detail}")]
    NoDriver {
        /// What the loader reported.
        detail: String,
    },
    /// The driver loaded, but it is older than the CUDA version kgraph is built against.
    #[error(
        "the CUDA driver supports CUDA {}, kgraph needs {} or newer (update the NVIDIA driver)",
        CudaVersion(*.found),
        CudaVersion(*.required)
    )]
    DriverTooOld {
        /// The CUDA version the driver supports, as `1000 * major + 10 * minor` (e.g. 12040).
        found: i32,
        /// The oldest version kgraph works with, in the same encoding.
        required: i32,
    },
    /// The driver loaded, but there is no device with this ordinal.
    #[error("no CUDA device {ordinal}: the driver sees {count} device(s)")]
    NoDevice {
        /// The ordinal that was asked for.
        ordinal: usize,
        /// How many devices the driver sees.
        count: usize,
    },
    /// [`Device::split_sms`](crate::Device::split_sms): the device (or its driver) cannot
    /// partition its SMs into green contexts.
    #[error("device {ordinal} cannot be split into green contexts: {op}: {}", DriverErrorText(.source))]
    NoGreenContexts {
        /// The device ordinal.
        ordinal: usize,
        /// The driver call that refused, e.g. `"cuGreenCtxCreate"`.
        op: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// The device has no stream-ordered memory pools (`CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED`
    /// is 0): kgraph frees device memory in stream order (`cuMemFreeAsync`), which its safety
    /// rests on; without pools cudarc frees with `cuMemFree` after a synchronize that an
    /// unrelated error can skip.
    #[error("device {ordinal} has no stream-ordered memory pools (cudaMallocAsync), which kgraph needs")]
    NoMemoryPools {
        /// The device ordinal.
        ordinal: usize,
    },
    /// [`Device::split_sms`](crate::Device::split_sms): the number of SMs asked for cannot be
    /// reserved while leaving SMs for the rest (0, or too many once rounded up).
    #[error(
        "cannot reserve {asked} of device {ordinal}'s {device_sms} SMs: a partition is at least {min_partition} \
         SMs, rounded up to a multiple of {alignment}, and the rest must keep at least one SM, so ask for 1 to \
         {max_reservable}"
    )]
    SmSplit {
        /// The device ordinal.
        ordinal: usize,
        /// The SMs asked for.
        asked: u32,
        /// The SMs the device has.
        device_sms: u32,
        /// The smallest partition the hardware makes.
        min_partition: u32,
        /// The granularity a partition is rounded up to.
        alignment: u32,
        /// The largest request that leaves SMs for the rest (0: this device cannot be split).
        max_reservable: u32,
    },
}

impl Error {
    /// Wraps a driver error with the operation that failed ([`Error::Driver`]).
    pub fn driver(op: impl Into<String>, source: DriverError) -> Self {
        Error::Driver { op: op.into(), source }
    }

    /// A graph error ([`GraphError::Failed`]): `op` is what was being done, `detail` why it failed.
    pub fn graph(op: impl Into<String>, detail: impl fmt::Display) -> Self {
        GraphError::Failed { op: op.into(), detail: detail.to_string() }.into()
    }

    /// `source` as it stopped `op` of the graph struct `graph` ([`Error::InGraph`]).
    pub fn in_graph(graph: &'static str, op: impl Into<String>, source: Error) -> Self {
        Error::InGraph { graph, op: op.into(), source: Box::new(source) }
    }

    /// [`MemoryError::LengthMismatch`] naming `what` unless `actual == expected`.
    pub(crate) fn check_len(what: &str, expected: usize, actual: usize) -> Result<()> {
        if expected == actual {
            Ok(())
        } else {
            Err(MemoryError::LengthMismatch { what: what.to_string(), expected, actual }.into())
        }
    }

    /// Bytes of `len` elements of `T`, or [`MemoryError::SizeOverflow`] naming `what`.
    pub fn byte_len<T>(what: &str, len: usize) -> Result<usize> {
        let elem_bytes = std::mem::size_of::<T>();
        len.checked_mul(elem_bytes)
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| MemoryError::SizeOverflow { what: what.to_string(), len, elem_bytes }.into())
    }
}

/// A CUDA version in the driver's encoding (`1000 * major + 10 * minor`) as `major.minor`.
struct CudaVersion(i32);

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0 / 1000, (self.0 % 1000) / 10)
    }
}

/// Shows a driver error as its code name plus the driver's description. cudarc's own `Display`
/// asks libcuda for the description, and its loader panics when libcuda is absent; the
/// description is only asked for when the library is known to load, so this never panics.
pub(super) struct DriverErrorText<'a>(&'a DriverError);

impl fmt::Display for DriverErrorText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0 .0)?;
        if driver_library_loads() {
            if let Ok(text) = self.0.error_string() {
                write!(f, " ({})", text.to_string_lossy())?;
            }
        }
        Ok(())
    }
}

/// Whether libcuda can be loaded; asked once per process.
pub(crate) fn driver_library_loads() -> bool {
    static LOADS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    // SAFETY: only asks the dynamic loader whether libcuda can be opened; nothing is called.
    *LOADS.get_or_init(|| unsafe { crate::driver::cuda_library_present() })
}
