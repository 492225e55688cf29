//! kgraph's handles of a CUDA context and a stream: cudarc's `CudaContext` and `CudaStream`
//! behind a wall that safe code cannot climb.
//!
//! kgraph turns cudarc's per-slice event tracking off (see [`crate::Device`]), and cudarc's safe
//! API assumes it on: with a `CudaContext` or `CudaStream` of kgraph's context in hand, safe
//! code could make a second stream (`new_stream`, `fork`, `default_stream`), issue work on it
//! touching a kgraph allocation, and drop the allocation while that work runs (its free is
//! ordered on its own stream only); or begin a capture kgraph does not know of. So kgraph hands
//! out [`Context`] and [`Stream`] instead, which name the context and the stream (for kgraph's
//! own APIs and checks) and reach the cudarc objects only through an `unsafe fn`.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream, DriverError};

use crate::driver;
use crate::error::{Error, Result};

/// A CUDA context as kgraph hands it out: what [`crate::ModuleCache::new`],
/// [`crate::GraphBuilder::new`] and friends take, and [`crate::Device::context`] returns.
#[derive(Clone, PartialEq)]
#[repr(transparent)]
pub struct Context(Arc<CudaContext>);

/// A CUDA stream as kgraph hands it out: what a generated launch, a capture and a graph replay
/// take, and [`crate::Device::stream`] returns. Work issued on it through kgraph is ordered by
/// it; the device memory kgraph allocates is allocated and freed in its owning stream's order
/// ([`crate::DeviceIn::stream`]).
#[derive(Clone, PartialEq)]
#[repr(transparent)]
pub struct Stream(Arc<CudaStream>);

impl Context {
    /// The wrapper of `ctx`, by reference (the two have one layout).
    pub(crate) fn wrap(ctx: &Arc<CudaContext>) -> &Context {
        // SAFETY: `Context` is `repr(transparent)` over `Arc<CudaContext>`, so the two
        // references have one layout and the lifetime is kept.
        unsafe { &*(ctx as *const Arc<CudaContext>).cast::<Context>() }
    }

    /// A wrapper of a cudarc context.
    ///
    /// # Safety
    /// When event tracking is off in `ctx` (as in every context kgraph makes), the caller keeps
    /// the contract of [`Context::cuda`] for `ctx` itself: kgraph's safe API relies on it.
    pub unsafe fn from_cuda(ctx: Arc<CudaContext>) -> Context {
        Context(ctx)
    }

    /// The cudarc context, for cudarc's own API.
    ///
    /// # Safety
    /// Event tracking is off in kgraph's contexts, and cudarc's safe API assumes it on. The
    /// caller keeps the contract of [`crate::Device::new_stream`] for every stream it makes
    /// through this context, issues no work touching kgraph's memory on a stream other than the
    /// memory's owner except under that contract, and begins a stream capture on a stream of
    /// kgraph's only under the contract of [`crate::Graph::capture`] (kgraph's own work is
    /// refused inside such a capture).
    pub unsafe fn cuda(&self) -> &Arc<CudaContext> {
        &self.0
    }

    /// The cudarc context, inside kgraph.
    pub(crate) fn inner(&self) -> &Arc<CudaContext> {
        &self.0
    }

    /// The raw `CUcontext` (for the driver API, and to compare contexts).
    pub fn cu_ctx(&self) -> sys::CUcontext {
        self.0.cu_ctx()
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.0.ordinal()
    }

    /// Whether cudarc's per-slice event tracking is on in this context (off in every context
    /// kgraph makes; kgraph's launches refuse slices of a context where it is on).
    pub fn is_event_tracking(&self) -> bool {
        self.0.is_event_tracking()
    }

    /// The error a `Drop` could not return (a failed free or wait, which cudarc and kgraph
    /// record in the context instead of panicking; the latest one is kept), taken and cleared.
    pub fn check_err(&self) -> Result<()> {
        self.0.check_err().map_err(|e| Error::driver("an earlier drop", e))
    }

    /// The device's compute capability (major, minor).
    pub fn compute_capability(&self) -> Result<(i32, i32)> {
        self.0.compute_capability().map_err(|e| Error::driver("query compute capability", e))
    }
}

impl Stream {
    /// The wrapper of `stream`, by reference (the two have one layout).
    pub(crate) fn wrap(stream: &Arc<CudaStream>) -> &Stream {
        // SAFETY: `Stream` is `repr(transparent)` over `Arc<CudaStream>`, so the two references
        // have one layout and the lifetime is kept.
        unsafe { &*(stream as *const Arc<CudaStream>).cast::<Stream>() }
    }

    /// An owned wrapper (kgraph's own streams).
    pub(crate) fn own(stream: Arc<CudaStream>) -> Stream {
        Stream(stream)
    }

    /// A wrapper of a cudarc stream.
    ///
    /// # Safety
    /// When event tracking is off in the stream's context, the caller keeps the contract of
    /// [`crate::Device::new_stream`] for this stream: kgraph's checked launches take it as the
    /// owner of nothing but what it allocated, and order nothing across streams.
    pub unsafe fn from_cuda(stream: Arc<CudaStream>) -> Stream {
        Stream(stream)
    }

    /// The cudarc stream, for cudarc's own API (and what generated launches issue on).
    ///
    /// # Safety
    /// As for [`Context::cuda`]: cudarc's safe API on this stream (its `fork`, its context's
    /// streams, its captures, its copies) assumes event tracking, which kgraph's contexts run
    /// without. The caller issues no work touching kgraph's memory on another stream but under
    /// the contract of [`crate::Device::new_stream`], and begins a capture on it only under the
    /// contract of [`crate::Graph::capture`].
    pub unsafe fn cuda(&self) -> &Arc<CudaStream> {
        &self.0
    }

    /// The cudarc stream, inside kgraph.
    pub(crate) fn inner(&self) -> &Arc<CudaStream> {
        &self.0
    }

    /// The raw `CUstream` (for the driver API, and to compare streams).
    pub fn cu_stream(&self) -> sys::CUstream {
        self.0.cu_stream()
    }

    /// The context of this stream.
    pub fn context(&self) -> &Context {
        Context::wrap(self.0.context())
    }

    /// Whether the stream is capturing (`cuStreamIsCapturing`, which leaves a capture intact).
    /// An error an earlier `Drop` recorded is left for [`Context::check_err`] (cudarc's own
    /// `capture_status` would return that error instead, and clear it).
    pub fn capture_status(&self) -> Result<sys::CUstreamCaptureStatus> {
        // SAFETY: the context is live (the stream holds it); making it current has no other effect.
        unsafe { driver::ctx_set_current(self.0.context().cu_ctx()) }
            .map_err(|e| Error::driver("query capture status", e))?;
        // SAFETY: the stream is live (`self` holds it) and its context is current (above).
        unsafe { driver::stream::is_capturing(self.0.cu_stream()) }
            .map_err(|e| Error::driver("query capture status", e))
    }

    /// Waits for all work issued on this stream so far. It always waits: an error an earlier
    /// `Drop` recorded in the context is left for [`Context::check_err`] (cudarc's own
    /// `synchronize` would return that error instead, without waiting).
    pub fn synchronize(&self) -> Result<()> {
        self.synchronize_as("synchronize stream")
    }

    /// [`Stream::synchronize`], with `op` as the operation its [`Error::Driver`] names.
    pub fn synchronize_as(&self, op: impl Into<String>) -> Result<()> {
        wait_stream_raw(&self.0).map_err(|e| Error::driver(op, e))
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context").field("cu_ctx", &self.cu_ctx()).field("ordinal", &self.ordinal()).finish()
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("cu_stream", &self.cu_stream())
            .field("cu_ctx", &self.context().cu_ctx())
            .finish()
    }
}

/// `cuStreamSynchronize` of `stream` with its context made current directly: cudarc's
/// `bind_to_thread` (inside `CudaStream::synchronize`) would first return, and clear, an error
/// an unrelated earlier `Drop` stored, and not wait.
pub(crate) fn wait_stream_raw(stream: &CudaStream) -> std::result::Result<(), DriverError> {
    // SAFETY: the context is live (the stream holds it); making it current has no other effect.
    unsafe { driver::ctx_set_current(stream.context().cu_ctx()) }?;
    // SAFETY: the stream is live and belongs to the current context.
    unsafe { driver::stream::synchronize(stream.cu_stream()) }
}
