//! Kernel launches with attributes (`cuLaunchKernelEx`), for what cudarc's `launch_builder`
//! cannot express: Hopper's programmatic dependent launch (PDL).

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cudarc::driver::{sys, CudaFunction, LaunchConfig};

use crate::capture_guard::check_stream;
use crate::context::Stream;
use crate::driver;
use crate::error::{Error, LaunchError, Result};

/// Per-launch options beyond grid/block/shared memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Programmatic dependent launch (sm_90+): the kernel may start while the previous kernel on
    /// the stream is still running; it must execute `griddepcontrol.wait`
    /// (`cudaGridDependencySynchronize()`) before reading what that kernel wrote, and should
    /// execute `griddepcontrol.launch_dependents` (`cudaTriggerProgrammaticLaunchCompletion()`)
    /// early so the next kernel can launch. Without the wait, results are undefined. Kernels that
    /// contain the wait run unchanged without this flag, so a graph with and without PDL computes
    /// the same values. Inside stream capture, becomes a programmatic graph edge.
    pub pdl: bool,
}

impl LaunchOptions {
    /// Options with PDL on.
    pub const PDL: LaunchOptions = LaunchOptions { pdl: true };
}

/// Checks that `cfg`'s blocks have at most `bound` threads, the kernel's `__launch_bounds__` or
/// its declaration's `max_block` (at `file:line`), before the driver sees the launch.
///
/// # Errors
///
/// [`LaunchError::BlockTooLarge`] when they have more.
#[inline(always)]
pub fn check_block(kernel: &'static str, cfg: &LaunchConfig, bound: u32, file: &'static str, line: u32) -> Result<()> {
    let (x, y, z) = cfg.block_dim;
    let block = (u64::from(x) * u64::from(y)).saturating_mul(u64::from(z));
    if block > u64::from(bound) {
        return Err(block_too_large(kernel, block, bound, file, line));
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn block_too_large(kernel: &'static str, block: u64, bound: u32, file: &'static str, line: u32) -> Error {
    let block = u32::try_from(block).unwrap_or(u32::MAX);
    Error::Launch(LaunchError::BlockTooLarge { kernel, block, bound, file, line })
}

/// Refuses a launch with `opts.pdl` of a kernel whose wait on its grid dependency is not
/// proven (`pdl_waits`, the handle's `PDL_WAITS`), before the driver sees it.
///
/// # Errors
///
/// [`LaunchError::PdlWithoutWait`].
#[inline(always)]
pub fn check_pdl(kernel: &'static str, opts: LaunchOptions, pdl_waits: bool) -> Result<()> {
    if opts.pdl && !pdl_waits {
        return Err(Error::Launch(LaunchError::PdlWithoutWait { kernel }));
    }
    Ok(())
}

/// The threads per block [`config_for`] uses for a kernel without `__launch_bounds__` (and its
/// cap for one with larger bounds).
pub const DEFAULT_BLOCK: u32 = 256;

/// A one-dimensional launch configuration for `n` threads: blocks of
/// `min(max_threads, DEFAULT_BLOCK)` threads (`DEFAULT_BLOCK` without bounds), as many as cover
/// `n`, and at least one.
pub fn config_for(n: u32, max_threads: Option<u32>) -> LaunchConfig {
    let block = max_threads.map_or(DEFAULT_BLOCK, |bound| bound.min(DEFAULT_BLOCK)).max(1);
    LaunchConfig { grid_dim: (n.div_ceil(block).max(1), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// One block of `block` threads per row, `rows` blocks: the launch of a kernel sized by its
/// grid (an RMSNorm or softmax launched one block per token, declared with extents such as
/// `out: &mut [f32; grid.x * hidden]`). The checked launch then holds the kernel to buffers of
/// `rows` rows.
///
/// ```
/// let cfg = kgraph_runtime::config_rows(37, 128);
/// assert_eq!((cfg.grid_dim, cfg.block_dim, cfg.shared_mem_bytes), ((37, 1, 1), (128, 1, 1), 0));
/// ```
pub fn config_rows(rows: u32, block: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (rows, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// What dynamic shared memory a kernel's launches may ask for without another driver call: a
/// cache of its `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, shared by the clones of one
/// handle. A generated handle holds one and calls [`DynamicSharedLimit::allow`] before every
/// launch, so a launch asking for more than the kernel's current limit (48 KiB less its static
/// shared memory, until raised) raises it first, as a CUDA C++ program does with
/// `cudaFuncSetAttribute`.
#[derive(Debug, Clone, Default)]
pub struct DynamicSharedLimit(Arc<AtomicU32>);

impl DynamicSharedLimit {
    /// Lets `function` take `bytes` of dynamic shared memory: nothing for a size known to be
    /// allowed; else the kernel's limit is read and, when lower, raised to the most the device
    /// grants this kernel (its opt-in maximum less the kernel's static shared memory). Raising
    /// to that one value never lowers a limit another launch relies on.
    ///
    /// # Errors
    ///
    /// [`LaunchError::SharedMemoryLimit`] when `bytes` is more than the device grants (asked before
    /// any attribute is set, so the driver sees no failing call); [`Error::LaunchFailed`] naming
    /// `kernel` when a query or the setting fails.
    #[inline]
    pub fn allow(&self, function: &CudaFunction, kernel: &'static str, bytes: u32) -> Result<()> {
        if bytes <= self.0.load(Ordering::Relaxed) {
            return Ok(());
        }
        let allowed = raise_dynamic_shared(function, kernel, bytes)?;
        self.0.fetch_max(allowed, Ordering::Relaxed);
        Ok(())
    }
}

/// The limit `function` allows once it covers `bytes` (raised to the device's maximum for it
/// when lower), or why it cannot.
#[cold]
#[inline(never)]
fn raise_dynamic_shared(function: &CudaFunction, kernel: &'static str, bytes: u32) -> Result<u32> {
    use sys::CUdevice_attribute_enum::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN as OPT_IN;
    use sys::CUfunction_attribute_enum::{
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as MAX_DYNAMIC, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES as STATIC,
    };
    let refused = |source| Error::LaunchFailed { kernel, source };
    // `get_attribute` binds the function's context, which the device query below reads.
    let current = u32::try_from(function.get_attribute(MAX_DYNAMIC).map_err(refused)?).unwrap_or(0);
    if current >= bytes {
        return Ok(current);
    }
    let fixed = function.get_attribute(STATIC).map_err(refused)?;
    // SAFETY: the context is current (bound just above).
    let device = unsafe { driver::ctx_device() }.map_err(refused)?;
    // SAFETY: a device handle the driver just returned.
    let opt_in = unsafe { driver::device_attribute(device, OPT_IN) }.map_err(refused)?;
    let limit = opt_in.saturating_sub(fixed).max(0);
    // `limit` is a non-negative `i32`.
    let limit_bytes = limit as u32;
    if bytes > limit_bytes {
        return Err(Error::Launch(LaunchError::SharedMemoryLimit { kernel, requested: bytes, limit: limit_bytes }));
    }
    function.set_attribute(MAX_DYNAMIC, limit).map_err(refused)?;
    Ok(limit_bytes)
}

/// [`GraphError::Failed`](crate::GraphError::Failed) when `stream` is capturing into a graph kgraph did not begin: what the
/// generated bindings call before launching `kernel` through cudarc's `launch_builder` (the
/// other launches go through [`launch_ex`], which checks the same).
#[doc(hidden)]
#[inline]
pub fn __check_capture(stream: &Stream, kernel: &'static str) -> Result<()> {
    let stream = stream.inner();
    // Bound first: a null (legacy default) stream is the current context's.
    stream.context().bind_to_thread().map_err(|source| Error::LaunchFailed { kernel, source })?;
    check_stream(stream, || format!("launch kernel `{kernel}`"))
}

/// Launches `function` with `cfg` and `opts` on `stream`; `args` holds one pointer per kernel
/// parameter, pointing at the parameter's value (as `cuLaunchKernel` expects). [`GraphError::Failed`](crate::GraphError::Failed)
/// when `stream` is capturing into a graph kgraph did not begin ([`crate::Graph::capture`]).
///
/// # Safety
/// `args` must match the kernel's parameter list in number, order and type, every pointer must
/// stay valid for the duration of the call, and the memory the kernel touches must be valid until
/// it finishes (its dynamic shared memory within `cfg.shared_mem_bytes`). With `opts.pdl`, the
/// kernel must wait on its grid dependency before reading data written by the previous kernel on
/// the stream. Dynamic shared memory above the kernel's limit (48 KiB less its static shared
/// memory, until raised) is the caller's to allow first ([`DynamicSharedLimit::allow`]); the
/// driver refuses the launch otherwise.
pub unsafe fn launch_ex(
    stream: &Stream,
    function: &CudaFunction,
    kernel: &'static str,
    cfg: LaunchConfig,
    opts: LaunchOptions,
    args: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller's promise (this function's, which covers PDL).
    unsafe { launch_with(stream, function, kernel, cfg, opts.pdl.then_some(Attribute::Pdl), args) }
}

/// [`launch_ex`] as a cooperative launch (`CU_LAUNCH_ATTRIBUTE_COOPERATIVE`): the driver starts
/// every block of the grid at once or refuses the launch, so the kernel may use grid-wide
/// barriers (`cooperative_groups::this_grid().sync()`).
///
/// # Safety
/// As [`launch_ex`] without PDL.
pub(crate) unsafe fn launch_cooperative(
    stream: &Stream,
    function: &CudaFunction,
    kernel: &'static str,
    cfg: LaunchConfig,
    args: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller's promise.
    unsafe { launch_with(stream, function, kernel, cfg, Some(Attribute::Cooperative), args) }
}

/// The launch attributes kgraph sets (each a flag set to 1).
#[derive(Clone, Copy)]
enum Attribute {
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`: programmatic dependent launch.
    Pdl,
    /// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`: every block resident at once, or no launch.
    Cooperative,
}

/// `cuLaunchKernelEx` with at most one attribute.
///
/// # Safety
/// As [`launch_ex`], for the attribute given.
unsafe fn launch_with(
    stream: &Stream,
    function: &CudaFunction,
    kernel: &'static str,
    cfg: LaunchConfig,
    attribute: Option<Attribute>,
    args: &mut [*mut c_void],
) -> Result<()> {
    let stream = stream.inner();
    stream.context().bind_to_thread().map_err(|source| Error::LaunchFailed { kernel, source })?;
    check_stream(stream, || format!("launch kernel `{kernel}`"))?;
    // SAFETY: CUlaunchAttribute is a plain C struct (id + union of plain values); all-zero is valid.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    match attribute {
        Some(Attribute::Pdl) => {
            attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr.value.programmaticStreamSerializationAllowed = 1;
        }
        Some(Attribute::Cooperative) => {
            attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            attr.value.cooperative = 1;
        }
        None => {}
    }
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: u32::from(attribute.is_some()),
    };
    // SAFETY: `config` and `attr` live across the call; the function handle is alive (borrowed);
    // the caller guarantees `args` matches the kernel (see # Safety).
    unsafe { driver::launch::launch_kernel_ex(&config, function.cu_function(), args.as_mut_ptr()) }
        .map_err(|source| Error::LaunchFailed { kernel, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_bounds_and_configs() {
        let cfg = config_for(1000, Some(128));
        assert_eq!((cfg.grid_dim, cfg.block_dim), ((8, 1, 1), (128, 1, 1)));
        let cfg = config_for(1000, None);
        assert_eq!((cfg.grid_dim, cfg.block_dim), ((4, 1, 1), (256, 1, 1)));
        assert_eq!(config_for(0, Some(1024)).grid_dim, (1, 1, 1), "at least one block");
        assert_eq!(config_for(u32::MAX, Some(1024)).grid_dim.0, u32::MAX.div_ceil(256));
        assert!(check_block("k", &config_for(1000, Some(128)), 128, "k.cu", 3).is_ok());
        let big = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (16, 16, 1), shared_mem_bytes: 0 };
        let err = check_block("k", &big, 128, "k.cu", 3).unwrap_err();
        assert!(matches!(
            err,
            Error::Launch(LaunchError::BlockTooLarge { kernel: "k", block: 256, bound: 128, file: "k.cu", line: 3 })
        ));
        assert_eq!(
            err.to_string(),
            "launching kernel `k`: blocks of 256 threads, but its block bound (`__launch_bounds__` or `max_block`, k.cu:3) allows at most 128"
        );
        assert!(check_pdl("k", LaunchOptions::PDL, true).is_ok());
        assert!(check_pdl("k", LaunchOptions::default(), false).is_ok());
        assert!(matches!(
            check_pdl("k", LaunchOptions::PDL, false),
            Err(Error::Launch(LaunchError::PdlWithoutWait { kernel: "k" }))
        ));
    }
}
