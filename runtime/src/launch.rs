//! Kernel launches with attributes (`cuLaunchKernelEx`), for what cudarc's `launch_builder`
//! cannot express: Hopper's programmatic dependent launch (PDL).

use std::ffi::c_void;

use cudarc::driver::{sys, CudaFunction, CudaStream, LaunchConfig};

use crate::error::{Error, Result};

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

/// Launches `function` with `cfg` and `opts` on `stream`; `args` holds one pointer per kernel
/// parameter, pointing at the parameter's value (as `cuLaunchKernel` expects).
///
/// # Safety
/// `args` must match the kernel's parameter list in number, order and type, every pointer must
/// stay valid for the duration of the call, and the memory the kernel touches must be valid until
/// it finishes. With `opts.pdl`, the kernel must wait on its grid dependency before reading data
/// written by the previous kernel on the stream.
pub unsafe fn launch_ex(
    stream: &CudaStream,
    function: &CudaFunction,
    kernel: &'static str,
    cfg: LaunchConfig,
    opts: LaunchOptions,
    args: &mut [*mut c_void],
) -> Result<()> {
    stream.context().bind_to_thread().map_err(|source| Error::Launch { kernel, source })?;
    // SAFETY: CUlaunchAttribute is a plain C struct (id + union of plain values); all-zero is valid.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
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
        numAttrs: u32::from(opts.pdl),
    };
    // SAFETY: `config` and `attr` live across the call; the function handle is alive (borrowed);
    // the caller guarantees `args` matches the kernel (see # Safety).
    unsafe { sys::cuLaunchKernelEx(&config, function.cu_function(), args.as_mut_ptr(), std::ptr::null_mut()) }
        .result()
        .map_err(|source| Error::Launch { kernel, source })
}
