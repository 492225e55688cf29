//! kgraph's errors: one [`Error`] whose variants are the domains (setting CUDA up, driver calls,
//! kernel modules, refused launches, memory, graphs, NCCL), each domain a nested enum callers
//! can match as a group (`Err(Error::Launch(_))`: kgraph refused the launch, nothing ran). Every
//! message says what failed: the operation, and the kernel, buffer, slot or graph node involved,
//! with sizes where sizes matter. Errors that wrap another (a driver error, an error inside a
//! graph struct's step) return it from [`std::error::Error::source`].

use cudarc::driver::DriverError;
use std::fmt;

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

/// Loading a kernel module or function failed ([`Error::Module`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// Loading a kernel module (cubin, or NVRTC-compiled source) failed.
    #[error("loading kernel module {file}: {detail}")]
    Load {
        /// The `.cu` file the module was built from.
        file: &'static str,
        /// Why.
        detail: String,
    },
    /// A kernel was not found in its module.
    #[error("kernel `{kernel}` not found in module {file}: {}", DriverErrorText(.source))]
    FunctionNotFound {
        /// The kernel's name.
        kernel: &'static str,
        /// The `.cu` file it should be in.
        file: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// A loaded kernel's parameters differ from its declaration's: parameter `index` (from 0)
    /// takes `found` bytes in the loaded module, the declaration passes `expected` (`found` is
    /// `None` when the module's kernel has fewer parameters). Checked at load, before any launch,
    /// where the driver reports parameters (`cuFuncGetParamInfo`, CUDA 12.4+): the check that
    /// stands in for the compile-time one when the build had no nvcc (NVRTC fallback).
    #[error(
        "loading kernel `{kernel}`: parameter {index} is {} in the loaded module, {} in the declaration",
        ParamBytes(*.found),
        ParamBytes(*.expected)
    )]
    ParamMismatch {
        /// The kernel's name.
        kernel: &'static str,
        /// The parameter, from 0.
        index: usize,
        /// Bytes the declaration passes (`None`: the declaration has fewer parameters).
        expected: Option<u32>,
        /// Bytes the loaded kernel takes (`None`: it has fewer parameters).
        found: Option<u32>,
    },
}

/// kgraph refused a launch, or a copy, before issuing it ([`Error::Launch`]): nothing was
/// launched. These are built on the launch path's `#[cold]` error branches only.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// A kernel argument is shorter than its declared extent (`x: &[f32; n]` in the
    /// `#[kernel]` declaration) for the scalar arguments of this launch.
    #[error("launching kernel `{kernel}`: argument `{param}` holds {actual} elements, its extent requires {required}")]
    Extent {
        /// The kernel's name.
        kernel: &'static str,
        /// The pointer parameter whose argument is too short.
        param: &'static str,
        /// The extent's value for this launch: the elements the kernel may access.
        required: u64,
        /// The elements the argument holds.
        actual: usize,
    },
    /// A declared extent could not be evaluated for the scalar arguments of this launch: it
    /// overflows the type it is computed in, divides by zero, or is negative.
    #[error("launching kernel `{kernel}`: the extent of `{param}` cannot be evaluated: {detail}")]
    ExtentArithmetic {
        /// The kernel's name.
        kernel: &'static str,
        /// The pointer parameter whose extent failed.
        param: &'static str,
        /// The extent as declared and what went wrong.
        detail: String,
    },
    /// An argument the kernel writes overlaps another pointer argument of the same launch
    /// (within their extents).
    #[error("launching kernel `{kernel}`: argument `{written}`, which the kernel writes, overlaps argument `{other}`")]
    Aliasing {
        /// The kernel's name.
        kernel: &'static str,
        /// The written parameter (`&mut [T]` or `PinnedMut<T>`).
        written: &'static str,
        /// The parameter it overlaps.
        other: &'static str,
    },
    /// A checked launch would start more threads than the `unsafe(extents)` promise covers
    /// (`kgraph::extent::MAX_THREADS_PER_LAUNCH`, 2^31: beyond it a thread index computed in
    /// C's `int` overflows).
    #[error(
        "launching kernel `{kernel}`: the launch configuration has {threads} threads, a checked launch at most {max}"
    )]
    TooManyThreads {
        /// The kernel's name.
        kernel: &'static str,
        /// Threads in the launch configuration (saturated at `u64::MAX`).
        threads: u64,
        /// The most a checked launch may start.
        max: u64,
    },
    /// The launch gives a kernel less dynamic shared memory (`cfg.shared_mem_bytes`) than its
    /// declaration's `shared = expr` requires for this launch's block and scalars.
    #[error(
        "launching kernel `{kernel}`: it needs {required} bytes of dynamic shared memory (`shared = {expr}`), the launch gives {given} (`cfg.shared_mem_bytes`)"
    )]
    SharedMemory {
        /// The kernel's name.
        kernel: &'static str,
        /// The declared requirement as written (`block.x * 4`).
        expr: &'static str,
        /// Its value for this launch, in bytes.
        required: u64,
        /// The bytes the launch configuration gives.
        given: u32,
    },
    /// The launch asks for more dynamic shared memory than the device grants one block of this
    /// kernel (its opt-in maximum less the kernel's static shared memory).
    #[error(
        "launching kernel `{kernel}`: {requested} bytes of dynamic shared memory asked, the device grants this kernel at most {limit}"
    )]
    SharedMemoryLimit {
        /// The kernel's name.
        kernel: &'static str,
        /// `cfg.shared_mem_bytes`.
        requested: u32,
        /// The most this kernel may have on this device.
        limit: u32,
    },
    /// A launch's block has more threads than the kernel's `__launch_bounds__` allows (the
    /// driver would refuse it with a less specific error), or than its declaration's
    /// `max_block` (the bound the kernel's `unsafe(extents)` promise is made for).
    #[error(
        "launching kernel `{kernel}`: blocks of {block} threads, but its block bound (`__launch_bounds__` or `max_block`, {file}:{line}) allows at most {bound}"
    )]
    BlockTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Threads per block in the launch configuration (saturated at `u32::MAX`).
        block: u32,
        /// The kernel's `__launch_bounds__` maximum, or the declaration's `max_block`.
        bound: u32,
        /// The `.cu` file of the kernel's `__launch_bounds__`, or the Rust file declaring
        /// `max_block`.
        file: &'static str,
        /// The line of its `__launch_bounds__`, or of the declaration's `max_block`.
        line: u32,
    },
    /// A condition of the kernel declaration's `requires(...)` is false for this launch's
    /// scalar arguments and shape (`requires(input_stride >= 0)`, `requires(block.x == 256)`):
    /// the author's `unsafe(extents)` promise is made only where every condition holds.
    #[error("launching kernel `{kernel}`: its requirement `{condition}` does not hold ({})", RequirementValues(.values))]
    Requirement {
        /// The kernel's name.
        kernel: &'static str,
        /// The condition as written in the declaration.
        condition: &'static str,
        /// The value of each name the condition uses in this launch (`("block.x", 128)`).
        values: Vec<(&'static str, i128)>,
    },
    /// A pointer argument's device address is not a multiple of the alignment its declaration
    /// requires (`align(x = 16)`: the kernel reads `x` as a wider vector type). A view or an
    /// offset slice of an allocation can be misaligned; whole allocations are 256-byte aligned.
    #[error(
        "launching kernel `{kernel}`: argument `{param}` is at device address {addr:#x}, which is not a multiple of {align} bytes (`align({param} = {align})`)"
    )]
    Misaligned {
        /// The kernel's name.
        kernel: &'static str,
        /// The pointer parameter.
        param: &'static str,
        /// The argument's device address.
        addr: u64,
        /// The alignment the declaration requires, in bytes.
        align: u64,
    },
    /// A launch asked for programmatic dependent launch (`LaunchOptions::PDL`) of a kernel not
    /// proven to execute `griddepcontrol.wait` (the handle's `PDL_WAITS` is `false`: the
    /// compiled kernel lacks the wait, calls a function kgraph cannot see, or the build left no
    /// record of what was compiled). Without the wait the kernel could read what the previous
    /// kernel is still writing.
    #[error(
        "launching kernel `{kernel}` with PDL: the kernel is not proven to execute `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before reading the previous kernel's output, so the launch is refused; add the wait, or launch without PDL"
    )]
    PdlWithoutWait {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A device-memory argument is owned by a stream other than the one the kernel (or copy)
    /// is issued on. kgraph contexts have cudarc's event tracking off, so an allocation is only
    /// ordered against work on its own stream (it is allocated and freed in that stream's order);
    /// work issued on another stream could run before the allocation exists or after it has been
    /// freed. Issue the work on the argument's stream, or order the streams yourself with events
    /// and use an unchecked (unsafe) path.
    #[error(
        "`{kernel}`: argument `{param}` lives on another stream than the one the work is issued on (its allocation is ordered only on its own stream); issue the work on that stream"
    )]
    ForeignStream {
        /// The kernel (or kgraph operation, e.g. `"Device::upload_into"`) being issued.
        kernel: &'static str,
        /// The parameter whose argument lives on another stream.
        param: &'static str,
    },
    /// A device-memory argument (or the launch stream) belongs to a cudarc context with event
    /// tracking on (a context made with plain cudarc rather than [`crate::Device`]). Such slices
    /// order themselves against other streams with per-slice events, which kgraph's launches
    /// neither wait for nor record, so cudarc's later uses and frees of the slice would not be
    /// ordered after kgraph's work. Allocate through a [`crate::Device`] instead.
    #[error(
        "`{kernel}`: argument `{param}` comes from a cudarc context with event tracking on; kgraph orders work by stream only, so allocate through `kgraph::Device`"
    )]
    TrackedContext {
        /// The kernel (or kgraph operation) being issued.
        kernel: &'static str,
        /// The parameter whose argument comes from the tracked context.
        param: &'static str,
    },
    /// A mapped pinned argument ([`crate::PinnedPtr`], [`crate::PinnedMutPtr`]) belongs to a
    /// context other than the launch stream's. The buffer's host views and its `Drop` wait for
    /// the device work of its own context only, so a launch in another context could still be
    /// using the memory when the host reads, writes or frees it.
    #[error("`{kernel}`: mapped pinned argument `{param}` belongs to another CUDA context than the launch stream")]
    ForeignContext {
        /// The kernel being launched.
        kernel: &'static str,
        /// The parameter whose argument comes from another context.
        param: &'static str,
    },
}

/// A length, size or index does not fit ([`Error::Memory`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// Host and device lengths disagree.
    #[error("{what}: length mismatch, expected {expected} elements, got {actual}")]
    LengthMismatch {
        /// Which buffer or operation.
        what: String,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A buffer's size in bytes does not fit in `usize`.
    #[error("{what}: {len} elements of {elem_bytes} bytes overflow the address space")]
    SizeOverflow {
        /// Which buffer or operation.
        what: String,
        /// The number of elements asked for.
        len: usize,
        /// The size of one element in bytes.
        elem_bytes: usize,
    },
    /// An index (slot, element) is out of range.
    #[error("{what}: index {index} out of range (len {len})")]
    OutOfRange {
        /// Which slot bus, buffer or table.
        what: String,
        /// The index asked for.
        index: usize,
        /// How many there are.
        len: usize,
    },
    /// A resident step's input or output is not a whole number of 4-byte words (it travels
    /// as one 8-byte pair per word).
    #[error("{what}: a resident step's record travels as 4-byte words, and {record} is {bytes} bytes")]
    RecordSize {
        /// Which resident and record.
        what: String,
        /// The Rust type.
        record: &'static str,
        /// Its size.
        bytes: usize,
    },
}

/// Capturing, building, replaying or updating a graph failed ([`Error::Graph`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// Stream capture, graph building or graph execution failed.
    #[error("graph {op}: {detail}")]
    Failed {
        /// What was being done (`"begin capture"`, `"replay"`, a node name...).
        op: String,
        /// Why.
        detail: String,
    },
    /// An instantiated graph could not be updated in place (`cuGraphExecUpdate` refused: the
    /// topology, a node's type or its kernel changed); rebuild and re-instantiate instead.
    #[error("{op}: the instantiated graph cannot be updated in place ({reason}); rebuild it")]
    Update {
        /// What was being updated.
        op: String,
        /// The driver's verdict (`CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED`, ...).
        reason: String,
    },
    /// `set_<scalar>` of a generated graph struct was given a value for which a node's extent
    /// that the scalar feeds (`x: &[f32; n]` with `n` bound to the scalar) does not fit the
    /// buffer bound to the parameter, or cannot be evaluated; the scalar and the captured graph
    /// are unchanged, so the next replay runs with the old value.
    #[error(
        "{graph}::set_{scalar}: refused (nothing changed): the extent `{expr}` of `{param}` in node `{node}` {}",
        ExtentVerdict { required: *.required, buffer, len: *.len }
    )]
    ScalarBreaksExtent {
        /// The graph struct's name.
        graph: &'static str,
        /// The scalar.
        scalar: &'static str,
        /// The node whose extent it breaks.
        node: &'static str,
        /// The node kernel's pointer parameter.
        param: &'static str,
        /// The parameter's extent as declared (`batch * n_in`).
        expr: &'static str,
        /// The buffer bound to the parameter.
        buffer: &'static str,
        /// The extent's value for the new scalar value, in elements; `None` when it has none
        /// (it overflows the C type it is computed in, divides by zero, or is negative).
        required: Option<u64>,
        /// The buffer's length in elements.
        len: u64,
    },
}

/// A spinning wait got no answer, or a resident kernel cannot take work ([`Error::Wait`]).
/// A device fault seen while waiting is [`Error::Driver`] (the stream's error as its source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The device had not published `seq` when the timeout ran out (it last published `seen`).
    /// Nothing is lost: the work is still in flight, and the next wait or submit waits for it
    /// again before the host touches what it uses.
    #[error("{what}: no answer after {waited:?} (waiting for sequence {seq}, the device last published {seen})")]
    Timeout {
        /// What was waited for (`"PerceptionResident::wait"`, `"Perception::read_probs"`).
        what: String,
        /// The sequence number waited for.
        seq: u32,
        /// The last sequence number the device published.
        seen: u32,
        /// How long the host waited.
        waited: std::time::Duration,
    },
    /// The resident kernel was stopped (by `stop`, or a fault broke it): it takes no more work.
    #[error("{what}: the resident kernel is stopped{}", if *.faulted { " (a device fault stopped it)" } else { "" })]
    Stopped {
        /// The call refused.
        what: String,
        /// A device fault stopped it (the error was returned by the wait that saw it).
        faulted: bool,
    },
    /// The device finished the work (its stream is idle) without publishing the sequence
    /// number: the graph or kernel does not follow the done-word protocol.
    #[error("{what}: the device finished without publishing sequence {seq} (it last published {seen})")]
    NotPublished {
        /// What was waited for.
        what: String,
        /// The sequence number waited for.
        seq: u32,
        /// The last sequence number the device published.
        seen: u32,
    },
}

/// cuBLAS, for a GEMM ([`Error::Gemm`]).
#[cfg(feature = "gemm")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GemmError {
    /// No usable cuBLAS library: none could be loaded, or it lacks a function kgraph calls.
    /// `detail` says what was tried and where cuBLAS comes from (docs/graph-spec.md).
    #[error("cuBLAS is not available: {detail}")]
    Missing {
        /// What the loader reported, with the names and folders tried.
        detail: String,
    },
    /// A GEMM's shape is invalid or does not fit its buffers; nothing was issued.
    #[error("{gemm}: {detail}; nothing was issued")]
    Shape {
        /// The product, e.g. `"gemm 64x32x16 f16 (trans_b)"`.
        gemm: String,
        /// The rule that failed.
        detail: String,
    },
    /// A cuBLAS call failed.
    #[error("{op} failed: {detail}")]
    Failed {
        /// What kgraph was doing, e.g. `"gemm 64x32x16 f32"` or `"cublasCreate"`.
        op: String,
        /// cuBLAS's status name.
        detail: String,
    },
}

/// NCCL, a multi-rank job's bootstrap, or a collective's shape failed ([`Error::Nccl`]).
#[cfg(feature = "nccl")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NcclError {
    /// No usable NCCL library: none could be loaded, it is older than kgraph needs, or it lacks
    /// a function kgraph calls. `detail` says what was tried and where NCCL comes from
    /// (docs/multi-gpu.md).
    #[error("NCCL is not available: {detail}")]
    Missing {
        /// What the loader reported, with the names tried.
        detail: String,
    },
    /// An NCCL call failed on one rank.
    #[error("rank {rank}: {op} failed: {detail}")]
    Failed {
        /// The failing process's rank in its communicator.
        rank: usize,
        /// What kgraph was doing, e.g. `"ncclAllReduce (1048576 x f32, sum)"`.
        op: String,
        /// NCCL's result code, its description and NCCL's last error message.
        detail: String,
    },
    /// Setting up a multi-rank job failed before NCCL was involved: an environment variable
    /// is missing or invalid, or sharing the NCCL unique id (file or TCP) failed or timed out.
    #[error("{}bootstrap: {detail}", RankPrefix(*.rank))]
    Bootstrap {
        /// This process's rank, when it is known (not when `RANK` itself is what failed).
        rank: Option<usize>,
        /// What went wrong, naming the variable, file or address.
        detail: String,
    },
    /// A collective's buffer lengths do not fit its shape for this world size (reduce-scatter
    /// sends `world_size` times what it receives, all-gather receives `world_size` times what
    /// it sends, all-reduce and broadcast keep the length); nothing was issued.
    #[error(
        "{}{collective} over {world_size} ranks: {rule} (send buffer {send_len} elements, receive buffer {recv_len}); nothing was issued",
        RankPrefix(*.rank)
    )]
    CollectiveLength {
        /// The collective, e.g. `"reduce_scatter"`.
        collective: &'static str,
        /// The issuing rank, when known (`None` from the rank-independent check).
        rank: Option<usize>,
        /// The communicator's world size.
        world_size: usize,
        /// Elements in the send buffer.
        send_len: usize,
        /// Elements in the receive buffer.
        recv_len: usize,
        /// The rule that failed, e.g. `"send length must be world_size x receive length"`.
        rule: &'static str,
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

/// A parameter's size in [`ModuleError::ParamMismatch`]: `N bytes`, or `no parameter`.
struct ParamBytes(Option<u32>);

impl fmt::Display for ParamBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(n) => write!(f, "{n} bytes"),
            None => f.write_str("no parameter"),
        }
    }
}

/// The end of [`GraphError::ScalarBreaksExtent`]'s message: the extent's value, or why it has none.
struct ExtentVerdict<'a> {
    required: Option<u64>,
    buffer: &'a str,
    len: u64,
}

impl fmt::Display for ExtentVerdict<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ExtentVerdict { buffer, len, .. } = self;
        match self.required {
            Some(required) => write!(f, "would be {required} elements, but buffer `{buffer}` holds {len}"),
            None => write!(
                f,
                "could not be evaluated (it overflows the C type it is computed in, divides by zero, or is negative); buffer `{buffer}` holds {len}"
            ),
        }
    }
}

/// The values in [`LaunchError::Requirement`]'s message: `n = 5, block.x = 128`.
struct RequirementValues<'a>(&'a [(&'static str, i128)]);

impl fmt::Display for RequirementValues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (name, value)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name} = {value}")?;
        }
        Ok(())
    }
}

/// `rank N: ` before an NCCL message when the rank is known, nothing otherwise.
#[cfg(feature = "nccl")]
struct RankPrefix(Option<usize>);

#[cfg(feature = "nccl")]
impl fmt::Display for RankPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(rank) => write!(f, "rank {rank}: "),
            None => Ok(()),
        }
    }
}

/// Shows a driver error as its code name plus the driver's description. cudarc's own `Display`
/// asks libcuda for the description, and its loader panics when libcuda is absent; the
/// description is only asked for when the library is known to load, so this never panics.
struct DriverErrorText<'a>(&'a DriverError);

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
