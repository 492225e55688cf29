//! One GPU and the stream kgraph works on.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use crate::error::{Error, Result};

/// A CUDA context with kgraph's settings, plus its main (non-blocking) stream.
///
/// # Event tracking is off
/// cudarc records a read and a write `CudaEvent` on every slice at every launch, to order
/// multi-stream use automatically. That costs about 1 us per launch and makes stream capture
/// fail with `CUDA_ERROR_STREAM_CAPTURE_ISOLATION` (the events belong to no capture). kgraph
/// turns it off before any allocation, so every slice allocated through a `Device` is untracked:
/// work is ordered by the stream it is issued on, and kgraph's own multi-stream code (graph
/// branches) orders itself with explicit events. If you issue work on several streams yourself,
/// order it with `CudaStream::join`/events, as in CUDA C++.
#[derive(Debug, Clone)]
pub struct Device {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

impl Device {
    /// Opens device `ordinal`. Fails with [`Error::NoDriver`] when libcuda cannot be loaded and
    /// [`Error::NoDevice`] when the ordinal does not exist; never panics.
    pub fn new(ordinal: usize) -> Result<Self> {
        // SAFETY: only asks the dynamic loader whether libcuda can be opened.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoDriver {
                detail: "libcuda.so could not be loaded (no NVIDIA driver on this machine?)".into(),
            });
        }
        let count = CudaContext::device_count().map_err(|e| Error::driver("count CUDA devices", e))?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::NoDevice { ordinal, count: count.max(0) as usize });
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::driver(format!("create context on device {ordinal}"), e))?;
        // SAFETY: called before this context allocates anything through kgraph, so no slice
        // mixes tracked and untracked use; kgraph orders all work by stream (see the type docs).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(|e| Error::driver("create stream", e))?;
        Ok(Device { ctx, stream })
    }

    /// The CUDA context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// kgraph's main stream on this device.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A further stream (for your own overlap; order it against others with events).
    pub fn new_stream(&self) -> Result<Arc<CudaStream>> {
        self.ctx.new_stream().map_err(|e| Error::driver("create stream", e))
    }

    /// Waits for all work on the main stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| Error::driver("synchronize stream", e))
    }

    /// (free, total) device memory in bytes, from `cuMemGetInfo`.
    pub fn mem_info(&self) -> Result<(usize, usize)> {
        self.ctx.mem_get_info().map_err(|e| Error::driver("cuMemGetInfo", e))
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn name(&self) -> Result<String> {
        self.ctx.name().map_err(|e| Error::driver("query device name", e))
    }
}
