//! [`Blas`]: a cuBLAS handle with workspaces of its own, issuing [`Gemm`]s on a stream or
//! capturing one into an uninstantiated graph ([`GemmGraph`]) for a graph builder's child node.

use std::cell::OnceCell;
use std::ffi::{c_int, c_void};

use cudarc::driver::sys;

use crate::capture_guard::{check_stream, OwnCapture};
use crate::context::Stream;
use crate::error::{Error, GemmError, LaunchError, Result};
use crate::gemm::desc::Gemm;
use crate::gemm::sys::{api, cublasHandle_t, Api};
use crate::graph::capture::{destroy_graph, OpenCapture};
use crate::memory::buffer::DeviceBuffer;
use crate::memory::device::Device;

/// A cuBLAS handle for one device, with `slots` workspaces of [`Blas::WORKSPACE_BYTES`] each.
///
/// cuBLAS needs a workspace set by the caller for its calls to be captured deterministically
/// (`cublasSetWorkspace`; without, a captured call takes memory from a pool the graph does not
/// own), and two GEMMs that may run at once (parallel branches of one graph) must not share
/// one: a graph struct gives each GEMM node its own slot. Calls through one handle are
/// serialized by `&self` being `!Sync`.
pub struct Blas {
    api: &'static Api,
    handle: cublasHandle_t,
    workspaces: Vec<DeviceBuffer<u8>>,
    /// Records captures only: made on the first capture.
    capture_stream: OnceCell<Stream>,
    version: c_int,
    device: Device,
}

// SAFETY: a cuBLAS handle may be used from any thread, one at a time (cuBLAS's thread-safety
// rule: no handle shared by threads simultaneously); `Blas` is `!Sync` (the raw handle and the
// `OnceCell`), so only its single owner calls through it.
unsafe impl Send for Blas {}

impl std::fmt::Debug for Blas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blas")
            .field("library", &self.api.library)
            .field("version", &self.version)
            .field("slots", &self.workspaces.len())
            .finish()
    }
}

/// One GEMM captured into an uninstantiated CUDA graph, owned (destroyed on drop).
#[derive(Debug)]
pub struct GemmGraph {
    graph: sys::CUgraph,
}

// SAFETY: a graph handle is not tied to a thread; `GemmGraph` is not `Sync`, so calls on it are
// serialised by its single owner.
unsafe impl Send for GemmGraph {}

impl GemmGraph {
    /// The `CUgraph`, still owned by `self` (for `cuGraphAddChildGraphNode`, which copies it).
    pub fn as_raw(&self) -> sys::CUgraph {
        self.graph
    }
}

impl Drop for GemmGraph {
    fn drop(&mut self) {
        destroy_graph(self.graph);
    }
}

impl Blas {
    /// Bytes of each workspace: cuBLAS's recommendation for Hopper (32 MiB; 4 MiB suffice for
    /// older GPUs).
    pub const WORKSPACE_BYTES: usize = 32 << 20;

    /// Loads cuBLAS (once per process; [`GemmError::Missing`] when it cannot), creates a handle
    /// on `device` and allocates `slots` workspaces (at least one) on its stream.
    pub fn new(device: &Device, slots: usize) -> Result<Blas> {
        let api = api()?;
        let mut workspaces = Vec::with_capacity(slots.max(1));
        for _ in 0..slots.max(1) {
            workspaces.push(device.alloc_zeros::<u8>(Self::WORKSPACE_BYTES)?);
        }
        bind_context(device, "cublasCreate")?;
        // SAFETY: the device's context is current (just above).
        let handle = unsafe { api.create() }?;
        // SAFETY: `handle` was just created.
        let version = match unsafe { api.version(handle) } {
            Ok(v) => v,
            Err(e) => {
                // SAFETY: created above, never used again.
                let _ = unsafe { api.destroy(handle) };
                return Err(e);
            }
        };
        Ok(Blas { api, handle, workspaces, capture_stream: OnceCell::new(), version, device: device.clone() })
    }

    /// The library loaded (the name or path `dlopen` accepted).
    pub fn library(&self) -> &str {
        &self.api.library
    }

    /// cuBLAS's version, `major * 10000 + minor * 100 + patch` (e.g. 130100).
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The number of workspace slots.
    pub fn slots(&self) -> usize {
        self.workspaces.len()
    }

    /// Issues `gemm` on `stream` with workspace `slot`: A, B and C at device addresses `a`, `b`,
    /// `c` holding `lens` elements each of `gemm.dtype`. The shape is checked first
    /// ([`Gemm::check`]: [`GemmError::Shape`], nothing issued).
    ///
    /// # Safety
    /// - `a`, `b` and `c` are device allocations (or parts of them) of this device's context
    ///   holding `lens` elements of `gemm.dtype` each, live until the work completes, used on
    ///   (or ordered with) `stream`, and C overlaps neither A nor B;
    /// - nothing else uses workspace `slot` while this call's work may run (work issued on one
    ///   stream is ordered; a captured graph gives each concurrent GEMM its own slot).
    pub unsafe fn issue_raw(
        &self,
        slot: usize,
        gemm: &Gemm,
        (a, b, c): (sys::CUdeviceptr, sys::CUdeviceptr, sys::CUdeviceptr),
        lens: [usize; 3],
        stream: &Stream,
    ) -> Result<()> {
        gemm.check(lens)?;
        if stream.context().cu_ctx() != self.device.context().cu_ctx() {
            return Err(Error::Launch(LaunchError::ForeignContext { kernel: "Blas::issue_raw", param: "stream" }));
        }
        let workspace = self.workspace(slot)?;
        bind_context(&self.device, "cuBLAS GEMM")?;
        check_stream(stream.inner(), || gemm.describe())?;
        let what = gemm.describe();
        // SAFETY: the handle is live and the context current; `stream` belongs to it (checked
        // above); the workspace is this struct's, used as the caller promises.
        unsafe {
            self.api.bind(self.handle, stream.cu_stream().cast(), workspace, Self::WORKSPACE_BYTES, gemm.math_mode())
        }?;
        // SAFETY: the shape fits the lengths (checked above); the memory as the caller promises.
        unsafe { self.api.gemm(self.handle, &gemm.col_major(a, b, c), &what) }
    }

    /// Captures `gemm` (as [`Blas::issue_raw`] issues it) into a CUDA graph that is returned
    /// uninstantiated, for a graph builder that adds it as a child-graph node
    /// (`cuGraphAddChildGraphNode` copies it, so the [`GemmGraph`] may be dropped after). The
    /// capture runs on a stream of this handle's (made on first use), so no other thread's
    /// launches on the device stream are recorded. The device stream must not be capturing
    /// ([`GraphError::Failed`](crate::GraphError::Failed)).
    ///
    /// # Safety
    /// As for [`Blas::issue_raw`], for as long as any graph made from the returned one may be
    /// replayed (the stream is the one the graph replays on); such graphs are dropped before
    /// this handle (its workspaces).
    pub unsafe fn capture_graph(
        &self,
        slot: usize,
        gemm: &Gemm,
        ptrs: (sys::CUdeviceptr, sys::CUdeviceptr, sys::CUdeviceptr),
        lens: [usize; 3],
    ) -> Result<GemmGraph> {
        gemm.check(lens)?;
        self.device.ensure_not_capturing("Blas::capture_graph")?;
        bind_context(&self.device, "capture a cuBLAS GEMM")?;
        let stream = self.capture_stream()?;
        stream
            .inner()
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| Error::driver("Blas::capture_graph: begin capture", e))?;
        // Ends the capture if `issue_raw` unwinds, so the stream is not left capturing.
        let open = OpenCapture { stream: stream.inner() };
        // The GEMM is recorded only into this capture, registered as kgraph's own.
        let issued = OwnCapture::register(stream.inner()).and_then(|own| {
            // SAFETY: the caller's contract, as documented; `stream` belongs to this device and
            // records the call without running it.
            let issued = unsafe { self.issue_raw(slot, gemm, ptrs, lens, stream) };
            drop(own);
            issued
        });
        let ended = open.end();
        match (issued, ended) {
            (Ok(()), Ok(graph)) if !graph.is_null() => Ok(GemmGraph { graph }),
            (Ok(()), Ok(_)) => Err(Error::graph("Blas::capture_graph", "the capture recorded no graph")),
            (Err(e), ended) => {
                if let Ok(graph) = ended {
                    if !graph.is_null() {
                        drop(GemmGraph { graph });
                    }
                }
                Err(e)
            }
            (Ok(()), Err(e)) => {
                Err(Error::driver(format!("Blas::capture_graph: end capture of {}", gemm.describe()), e))
            }
        }
    }

    fn workspace(&self, slot: usize) -> Result<*mut c_void> {
        let ws = self.workspaces.get(slot).ok_or_else(|| {
            Error::Gemm(GemmError::Failed {
                op: "cuBLAS GEMM".into(),
                detail: format!("workspace slot {slot} does not exist ({} slots)", self.workspaces.len()),
            })
        })?;
        Ok(crate::launch::args::DeviceIn::device_addr(ws) as *mut c_void)
    }

    /// The stream captures record on: not the device stream, so that another thread launching
    /// on the device stream meanwhile is not recorded into a GEMM's graph.
    fn capture_stream(&self) -> Result<&Stream> {
        if let Some(stream) = self.capture_stream.get() {
            return Ok(stream);
        }
        // SAFETY: nothing runs on it: it only records captures, and the graphs they make run
        // where the caller adds them, under the caller's contract.
        let stream = unsafe { self.device.new_stream() }?;
        Ok(self.capture_stream.get_or_init(|| stream))
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        if bind_context(&self.device, "cublasDestroy").is_ok() {
            // SAFETY: the handle is live and owned by `self`, never used again. Work it issued
            // may still run: cuBLAS's destroy synchronizes the device before releasing it, and
            // the workspaces are freed after (dropped with the fields, in stream order).
            let _ = unsafe { self.api.destroy(self.handle) };
        }
    }
}

/// Makes `device`'s context current on this thread: cuBLAS runs on the CUDA runtime, which
/// uses the current driver context.
fn bind_context(device: &Device, op: &str) -> Result<()> {
    device.ctx.bind_to_thread().map_err(|e| {
        Error::Gemm(GemmError::Failed {
            op: op.to_string(),
            detail: format!("make the device's context current: {e:?}"),
        })
    })
}
