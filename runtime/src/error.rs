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
    /// The driver loaded, but it is older than the CUDA version kgraph is built against.
    DriverTooOld {
        /// The CUDA version the driver supports, as `1000 * major + 10 * minor` (e.g. 12040).
        found: i32,
        /// The oldest version kgraph works with, in the same encoding.
        required: i32,
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
    /// A buffer's size in bytes does not fit in `usize`.
    SizeOverflow {
        /// Which buffer or operation.
        what: String,
        /// The number of elements asked for.
        len: usize,
        /// The size of one element in bytes.
        elem_bytes: usize,
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
    /// An instantiated graph could not be updated in place (`cuGraphExecUpdate` refused: the
    /// topology, a node's type or its kernel changed); rebuild and re-instantiate instead.
    GraphUpdate {
        /// What was being updated.
        op: String,
        /// The driver's verdict (`CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED`, ...).
        reason: String,
    },
    /// Stream capture or graph execution failed.
    Graph {
        /// What was being done (`"begin capture"`, `"replay"`, a node name...).
        op: String,
        /// Why.
        detail: String,
    },
    /// A device-memory argument is owned by a stream other than the one the kernel (or copy)
    /// is issued on. kgraph contexts have cudarc's event tracking off, so an allocation is only
    /// ordered against work on its own stream (it is allocated and freed in that stream's order);
    /// work issued on another stream could run before the allocation exists or after it has been
    /// freed. Issue the work on the argument's stream, or order the streams yourself with events
    /// and use an unchecked (unsafe) path.
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
    ForeignContext {
        /// The kernel being launched.
        kernel: &'static str,
        /// The parameter whose argument comes from another context.
        param: &'static str,
    },
    /// A step of a generated graph struct failed (allocating a buffer, loading a kernel);
    /// `source` is the underlying error, kept whole so callers can match on it.
    InGraph {
        /// The graph struct's name.
        graph: &'static str,
        /// What was being done, e.g. `"allocate state buffer `h` (64 x f32)"`.
        op: String,
        /// The error that stopped it.
        source: Box<Error>,
    },
    /// A kernel argument is shorter than its declared extent (`x: &[f32; n]` in the
    /// `#[kernel]` declaration) for the scalar arguments of this launch; nothing was launched.
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
    /// The launch gives a kernel less dynamic shared memory (`cfg.shared_mem_bytes`) than its
    /// declaration's `shared = expr` requires for this launch's block and scalars; nothing was
    /// launched.
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
    /// kernel (its opt-in maximum less the kernel's static shared memory); nothing was launched.
    SharedMemoryLimit {
        /// The kernel's name.
        kernel: &'static str,
        /// `cfg.shared_mem_bytes`.
        requested: u32,
        /// The most this kernel may have on this device.
        limit: u32,
    },
    /// A declared extent could not be evaluated for the scalar arguments of this launch: it
    /// overflows the type it is computed in, divides by zero, or is negative; nothing was
    /// launched.
    ExtentArithmetic {
        /// The kernel's name.
        kernel: &'static str,
        /// The pointer parameter whose extent failed.
        param: &'static str,
        /// The extent as declared and what went wrong.
        detail: String,
    },
    /// An argument the kernel writes overlaps another pointer argument of the same launch
    /// (within their extents); nothing was launched.
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
    /// C's `int` overflows); nothing was launched.
    TooManyThreads {
        /// The kernel's name.
        kernel: &'static str,
        /// Threads in the launch configuration (saturated at `u64::MAX`).
        threads: u64,
        /// The most a checked launch may start.
        max: u64,
    },
    /// A launch's block has more threads than the kernel's `__launch_bounds__` allows (the
    /// driver would refuse it with a less specific error); nothing was launched.
    BlockTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Threads per block in the launch configuration (saturated at `u32::MAX`).
        block: u32,
        /// The kernel's `__launch_bounds__` maximum.
        bound: u32,
        /// The `.cu` file of the kernel.
        file: &'static str,
        /// The line of its `__launch_bounds__`.
        line: u32,
    },
    /// `set_<scalar>` of a generated graph struct was given a value for which a node's extent
    /// that the scalar feeds (`x: &[f32; n]` with `n` bound to the scalar) does not fit the
    /// buffer bound to the parameter, or cannot be evaluated; the scalar and the captured graph
    /// are unchanged, so the next replay runs with the old value.
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
    /// A launch asked for programmatic dependent launch (`LaunchOptions::PDL`) of a kernel not
    /// proven to execute `griddepcontrol.wait` (the handle's `PDL_WAITS` is `false`: the
    /// compiled kernel lacks the wait, calls a function kgraph cannot see, or the build left no
    /// record of what was compiled). Without the wait the kernel could read what the previous
    /// kernel is still writing; nothing was launched.
    PdlWithoutWait {
        /// The kernel's name.
        kernel: &'static str,
    },
    /// A loaded kernel's parameters differ from its declaration's: parameter `index` (from 0)
    /// takes `found` bytes in the loaded module, the declaration passes `expected` (`found` is
    /// `None` when the module's kernel has fewer parameters). Checked at load, before any launch,
    /// where the driver reports parameters (`cuFuncGetParamInfo`, CUDA 12.4+): the check that
    /// stands in for the compile-time one when the build had no nvcc (NVRTC fallback).
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
    /// No usable NCCL library: none could be loaded, it is older than kgraph needs, or it lacks
    /// a function kgraph calls. `detail` says what was tried and where NCCL comes from
    /// (docs/multi-gpu.md).
    NcclMissing {
        /// What the loader reported, with the names tried.
        detail: String,
    },
    /// An NCCL call failed on one rank.
    Nccl {
        /// The failing process's rank in its communicator.
        rank: usize,
        /// What kgraph was doing, e.g. `"ncclAllReduce (1048576 x f32, sum)"`.
        op: String,
        /// NCCL's result code, its description and NCCL's last error message.
        detail: String,
    },
    /// Setting up a multi-rank job failed before NCCL was involved: an environment variable
    /// is missing or invalid, or sharing the NCCL unique id (file or TCP) failed or timed out.
    Bootstrap {
        /// This process's rank, when it is known (not when `RANK` itself is what failed).
        rank: Option<usize>,
        /// What went wrong, naming the variable, file or address.
        detail: String,
    },
    /// A collective's buffer lengths do not fit its shape for this world size (reduce-scatter
    /// sends `world_size` times what it receives, all-gather receives `world_size` times what
    /// it sends, all-reduce and broadcast keep the length); nothing was issued.
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

/// `Result` with kgraph's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps a driver error with the operation that failed.
    pub fn driver(op: impl Into<String>, source: DriverError) -> Self {
        Error::Driver { op: op.into(), source }
    }

    /// A graph error: `op` is what was being done, `detail` why it failed.
    pub fn graph(op: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        Error::Graph { op: op.into(), detail: detail.to_string() }
    }

    /// `source` as it stopped `op` of the graph struct `graph`.
    pub fn in_graph(graph: &'static str, op: impl Into<String>, source: Error) -> Self {
        Error::InGraph { graph, op: op.into(), source: Box::new(source) }
    }

    /// [`Error::LengthMismatch`] naming `what` unless `actual == expected`.
    pub(crate) fn check_len(what: &str, expected: usize, actual: usize) -> Result<()> {
        if expected == actual {
            Ok(())
        } else {
            Err(Error::LengthMismatch { what: what.to_string(), expected, actual })
        }
    }

    /// Bytes of `len` elements of `T`, or [`Error::SizeOverflow`] naming `what`.
    pub fn byte_len<T>(what: &str, len: usize) -> Result<usize> {
        let elem_bytes = std::mem::size_of::<T>();
        len.checked_mul(elem_bytes).filter(|&b| b <= isize::MAX as usize).ok_or_else(|| Error::SizeOverflow {
            what: what.to_string(),
            len,
            elem_bytes,
        })
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NoDriver { detail } => write!(f, "no CUDA driver found: {detail}"),
            Error::DriverTooOld { found, required } => write!(
                f,
                "the CUDA driver supports CUDA {}.{}, kgraph needs {}.{} or newer (update the NVIDIA driver)",
                found / 1000,
                (found % 1000) / 10,
                required / 1000,
                (required % 1000) / 10
            ),
            Error::NoDevice { ordinal, count } => {
                write!(f, "no CUDA device {ordinal}: the driver sees {count} device(s)")
            }
            Error::Driver { op, source } => write!(f, "{op}: {}", DriverErrorText(source)),
            Error::ModuleLoad { file, detail } => write!(f, "loading kernel module {file}: {detail}"),
            Error::FunctionNotFound { kernel, file, source } => {
                write!(f, "kernel `{kernel}` not found in module {file}: {}", DriverErrorText(source))
            }
            Error::Launch { kernel, source } => {
                write!(f, "launching kernel `{kernel}`: {}", DriverErrorText(source))
            }
            Error::LengthMismatch { what, expected, actual } => {
                write!(f, "{what}: length mismatch, expected {expected} elements, got {actual}")
            }
            Error::SizeOverflow { what, len, elem_bytes } => {
                write!(f, "{what}: {len} elements of {elem_bytes} bytes overflow the address space")
            }
            Error::OutOfRange { what, index, len } => {
                write!(f, "{what}: index {index} out of range (len {len})")
            }
            Error::Graph { op, detail } => write!(f, "graph {op}: {detail}"),
            Error::GraphUpdate { op, reason } => {
                write!(f, "{op}: the instantiated graph cannot be updated in place ({reason}); rebuild it")
            }
            Error::ForeignStream { kernel, param } => write!(
                f,
                "`{kernel}`: argument `{param}` lives on another stream than the one the work is issued on (its allocation is ordered only on its own stream); issue the work on that stream"
            ),
            Error::TrackedContext { kernel, param } => write!(
                f,
                "`{kernel}`: argument `{param}` comes from a cudarc context with event tracking on; kgraph orders work by stream only, so allocate through `kgraph::Device`"
            ),
            Error::ForeignContext { kernel, param } => write!(
                f,
                "`{kernel}`: mapped pinned argument `{param}` belongs to another CUDA context than the launch stream"
            ),
            Error::InGraph { graph, op, source } => write!(f, "{graph}: {op}: {source}"),
            Error::SharedMemory { kernel, expr, required, given } => write!(
                f,
                "launching kernel `{kernel}`: it needs {required} bytes of dynamic shared memory (`shared = {expr}`), the launch gives {given} (`cfg.shared_mem_bytes`)"
            ),
            Error::SharedMemoryLimit { kernel, requested, limit } => write!(
                f,
                "launching kernel `{kernel}`: {requested} bytes of dynamic shared memory asked, the device grants this kernel at most {limit}"
            ),
            Error::Extent { kernel, param, required, actual } => write!(
                f,
                "launching kernel `{kernel}`: argument `{param}` holds {actual} elements, its extent requires {required}"
            ),
            Error::ExtentArithmetic { kernel, param, detail } => {
                write!(f, "launching kernel `{kernel}`: the extent of `{param}` cannot be evaluated: {detail}")
            }
            Error::Aliasing { kernel, written, other } => write!(
                f,
                "launching kernel `{kernel}`: argument `{written}`, which the kernel writes, overlaps argument `{other}`"
            ),
            Error::TooManyThreads { kernel, threads, max } => write!(
                f,
                "launching kernel `{kernel}`: the launch configuration has {threads} threads, a checked launch at most {max}"
            ),
            Error::BlockTooLarge { kernel, block, bound, file, line } => write!(
                f,
                "launching kernel `{kernel}`: blocks of {block} threads, but its `__launch_bounds__` ({file}:{line}) allows at most {bound}"
            ),
            Error::ScalarBreaksExtent { graph, scalar, node, param, expr, buffer, required, len } => {
                write!(f, "{graph}::set_{scalar}: refused (nothing changed): the extent `{expr}` of `{param}` in node `{node}` ")?;
                match required {
                    Some(required) => {
                        write!(f, "would be {required} elements, but buffer `{buffer}` holds {len}")
                    }
                    None => write!(
                        f,
                        "could not be evaluated (it overflows the C type it is computed in, divides by zero, or is negative); buffer `{buffer}` holds {len}"
                    ),
                }
            }
            Error::PdlWithoutWait { kernel } => write!(
                f,
                "launching kernel `{kernel}` with PDL: the kernel is not proven to execute `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before reading the previous kernel's output, so the launch is refused; add the wait, or launch without PDL"
            ),
            Error::NcclMissing { detail } => write!(f, "NCCL is not available: {detail}"),
            Error::Nccl { rank, op, detail } => write!(f, "rank {rank}: {op} failed: {detail}"),
            Error::Bootstrap { rank: Some(rank), detail } => write!(f, "rank {rank}: bootstrap: {detail}"),
            Error::Bootstrap { rank: None, detail } => write!(f, "bootstrap: {detail}"),
            Error::CollectiveLength { collective, rank, world_size, send_len, recv_len, rule } => {
                if let Some(rank) = rank {
                    write!(f, "rank {rank}: ")?;
                }
                write!(
                    f,
                    "{collective} over {world_size} ranks: {rule} (send buffer {send_len} elements, receive buffer {recv_len}); nothing was issued"
                )
            }
            Error::ParamMismatch { kernel, index, expected, found } => {
                let bytes = |b: &Option<u32>| b.map_or_else(|| "no parameter".to_string(), |n| format!("{n} bytes"));
                write!(
                    f,
                    "loading kernel `{kernel}`: parameter {index} is {} in the loaded module, {} in the declaration",
                    bytes(found),
                    bytes(expected)
                )
            }
        }
    }
}

/// Shows a driver error as its code name plus the driver's description. cudarc's own `Display`
/// asks libcuda for the description, and its loader panics when libcuda is absent; the
/// description is only asked for when the library is known to load, so this never panics.
struct DriverErrorText<'a>(&'a DriverError);

impl std::fmt::Display for DriverErrorText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Driver { source, .. } | Error::FunctionNotFound { source, .. } | Error::Launch { source, .. } => {
                Some(source)
            }
            Error::InGraph { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
