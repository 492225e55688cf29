//! [`Graph`]: a CUDA graph captured from a stream, instantiated, replayed.

use std::cell::{Cell, OnceCell};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::driver::{sys, CudaEvent, CudaStream, DriverError};

use crate::capture_guard::{check_stream, OwnCapture};
use crate::context::Stream;
use crate::driver;
use crate::error::{Error, Result};

/// A captured and instantiated CUDA graph, replayed on the stream it was captured from (or, from
/// [`Graph::capture_on`], on the replay stream given).
///
/// # Capture mode
/// [`Graph::capture`] captures in `CU_STREAM_CAPTURE_MODE_THREAD_LOCAL`: a call on the capturing
/// thread that cannot be captured (a synchronisation, a blocking copy, kgraph's eager
/// [`crate::Device::upload`]/[`crate::Device::download`]) fails at once instead of silently
/// running outside the graph, while other threads keep working undisturbed (the global mode
/// would make their allocations fail during the capture).
///
/// # Buffers
/// A graph holds raw device addresses: every buffer a captured launch touches must stay alive,
/// in place, as long as the graph exists, and the host must not use it (except with kgraph's
/// volatile accessors) while a replay may run. The borrow checker cannot see that, so
/// [`Graph::capture`] is `unsafe`; kgraph's generated graph structs are safe because they own
/// every buffer they capture, next to the graph itself.
///
/// # Threads
/// `Graph` is `Send` but not `Sync`: the driver does not synchronise access to graph objects,
/// so one thread at a time uses it.
///
/// ```
/// fn movable<T: Send>() {}
/// movable::<kgraph_runtime::Graph>();
/// ```
/// ```compile_fail
/// fn shareable<T: Sync>() {}
/// shareable::<kgraph_runtime::Graph>();
/// ```
#[derive(Debug)]
pub struct Graph {
    graph: sys::CUgraph,
    /// Null when the capture recorded no work (nothing to instantiate or launch).
    exec: sys::CUgraphExec,
    stream: Arc<CudaStream>,
    node_count: usize,
    /// Start and end events for [`Graph::replay_timed`], created on first use.
    timing: OnceCell<(CudaEvent, CudaEvent)>,
    /// The graph of the last whole-graph update ([`Graph::update_from`]), kept for
    /// [`Graph::debug_dot`]; `graph` stays the instantiation source, whose nodes identify the
    /// executable's nodes.
    pub(crate) updated_from: Option<sys::CUgraph>,
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: graph handles are not tied to a thread; the driver only requires that calls on one
// graph are serialised, which `!Sync` (exclusive use by the owning thread) guarantees. The
// stream and events are `Send`.
unsafe impl Send for Graph {}

impl Graph {
    /// Captures the work `f` issues on `stream` into a graph and instantiates it.
    ///
    /// - [`GraphError::Failed`](crate::GraphError::Failed) `"begin capture"` if `stream` is already capturing.
    /// - If `f` returns `Err` (or panics), the capture is ended and the partial graph destroyed
    ///   before the error is returned (or the panic resumed), so `stream` is usable again.
    /// - [`GraphError::Failed`](crate::GraphError::Failed) `"end capture"` if the capture was invalidated (an uncapturable call
    ///   inside `f`), with the stream again usable.
    ///
    /// # Safety
    /// The graph keeps the raw addresses of everything the captured work touches, but no
    /// borrow of it: the borrows `f` holds end when `f` returns. The caller promises that
    /// - every allocation the captured work touches (device slices, mapped pinned buffers,
    ///   slots, the stream's own pool allocations) outlives every [`Graph::replay`],
    ///   [`Graph::replay_timed`] and [`Graph::upload`] of the graph, and is not freed or
    ///   reallocated while the graph exists (drop the graph first, or wait for its last replay
    ///   and never replay it again);
    /// - the host does not access memory the captured work reads or writes while a replay may
    ///   be running (through references: `MappedBuffer::as_mut_slice` only waits for work lent
    ///   a pointer since its last wait, and a replay lends none); kgraph's volatile
    ///   accessors (`PinnedSlot::write`/`peek`, `MappedBuffer::read_volatile_into`/
    ///   `to_vec_volatile`) stay allowed;
    /// - any other stream the captured work forks to is joined back (else the capture fails)
    ///   and, at replay, cross-stream uses are ordered by the captured events;
    /// - the modules of captured kernels that were loaded other than through kgraph (cudarc's
    ///   `load_module`) stay loaded while the graph exists and until its last replay has ended
    ///   (kgraph keeps every module it loads for the context's life);
    /// - nothing but `f` issues work on `stream` while `f` runs: no other thread launches on it
    ///   (kgraph refuses the launches whose check sees this capture, but one checked just before
    ///   it began is recorded), and no buffer `stream` owns is dropped, inside `f` or by another
    ///   thread (its stream-ordered free would be recorded and run at every replay). Capturing
    ///   on a stream of your own ([`Graph::capture_on`]) keeps both away.
    ///
    /// kgraph cannot check any of these: a graph is a list of addresses.
    ///
    /// Only this thread's work is kgraph's to record: kgraph's launches, copies and replays
    /// that another thread issues on `stream` while `f` runs are refused with [`GraphError::Failed`](crate::GraphError::Failed)
    /// (its raw cudarc work would be recorded). To keep other threads' launches on a stream
    /// out of the way, capture on a private one ([`Graph::capture_on`]).
    pub unsafe fn capture<F>(stream: &Stream, f: F) -> Result<Graph>
    where
        F: FnOnce(&Stream) -> Result<()>,
    {
        // SAFETY: the caller's contract, as documented.
        unsafe { Graph::capture_on(stream, stream, f) }
    }

    /// [`Graph::capture`] on `capture`, for replays on `replay`: capture on a stream nobody
    /// else issues on (a fresh one, or one private to the caller) and replay on the stream the
    /// captured work's buffers are ordered on. Nothing runs during a capture, so `capture` needs
    /// no ordering with `replay`; a capture on a private stream records no other thread's
    /// launches.
    ///
    /// [`GraphError::Failed`](crate::GraphError::Failed) `"begin capture"` when the two streams belong to different CUDA
    /// contexts (`CUcontext`s: two `Device`s of one ordinal share one).
    ///
    /// # Safety
    /// As for [`Graph::capture`], with every replay on `replay`.
    pub unsafe fn capture_on<F>(capture: &Stream, replay: &Stream, f: F) -> Result<Graph>
    where
        F: FnOnce(&Stream) -> Result<()>,
    {
        if capture.context().cu_ctx() != replay.context().cu_ctx() {
            return Err(Error::graph("begin capture", "the capture and replay streams belong to different contexts"));
        }
        let (wrapped, stream) = (capture, capture.inner());
        let status = stream.capture_status().map_err(|e| Error::driver("graph capture: query capture status", e))?;
        if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            return Err(Error::graph(
                "begin capture",
                format!("the stream is already capturing ({status:?}); end that capture first"),
            ));
        }
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| Error::driver("graph capture: begin capture", e))?;
        // kgraph's stream work inside `f` is recorded only while this capture is registered
        // as kgraph's own (on this thread); work for any other capture is refused.
        let own = match OwnCapture::register(stream) {
            Ok(own) => own,
            Err(e) => {
                abort_capture(stream);
                return Err(e);
            }
        };
        let ran = catch_unwind(AssertUnwindSafe(|| f(wrapped)));
        drop(own);
        match ran {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                abort_capture(stream);
                return Err(e);
            }
            Err(panic) => {
                abort_capture(stream);
                resume_unwind(panic);
            }
        }
        let graph = end_capture(stream)?;
        let mut node_count = 0usize;
        // SAFETY: `graph` is a live graph; a null node array asks for the count only.
        let counted = unsafe { driver::graph::get_nodes(graph, std::ptr::null_mut(), &mut node_count) };
        if let Err(e) = counted {
            destroy_graph(graph);
            return Err(Error::driver("graph capture: count nodes", e));
        }
        let exec = if node_count == 0 {
            std::ptr::null_mut()
        } else {
            // SAFETY: `graph` is a live, complete graph (capture ended); default flags.
            match unsafe { driver::graph::instantiate(graph) } {
                Ok(exec) => exec,
                Err(e) => {
                    destroy_graph(graph);
                    return Err(Error::driver(format!("graph capture: instantiate a graph of {node_count} nodes"), e));
                }
            }
        };
        Ok(Graph::from_parts(graph, exec, replay.inner().clone(), node_count))
    }

    /// A graph from its parts: `graph` (owned from now on), its executable (null when `graph`
    /// has no nodes), the stream it replays on and its top-level node count.
    pub(crate) fn from_parts(
        graph: sys::CUgraph,
        exec: sys::CUgraphExec,
        stream: Arc<CudaStream>,
        node_count: usize,
    ) -> Graph {
        Graph { graph, exec, stream, node_count, timing: OnceCell::new(), updated_from: None, _not_sync: PhantomData }
    }

    /// Uploads the executable graph to the device ahead of the first replay (which otherwise
    /// pays for it). [`GraphError::Failed`](crate::GraphError::Failed) for an empty graph.
    pub fn upload(&self) -> Result<()> {
        let exec = self.exec("upload")?;
        self.stream.context().bind_to_thread().map_err(|e| Error::driver("graph upload: bind context", e))?;
        // SAFETY: `exec` and the stream are live and belong to the bound context.
        unsafe { driver::graph::upload(exec, self.stream.cu_stream()) }.map_err(|e| Error::driver("graph upload", e))
    }

    /// Launches the graph on its stream (asynchronous). [`GraphError::Failed`](crate::GraphError::Failed) for an empty graph, and
    /// when the stream is capturing into a graph kgraph did not begin (the replay would be
    /// recorded there, outside the lifetimes this graph's creator promised).
    pub fn replay(&self) -> Result<()> {
        let exec = self.launchable("replay")?;
        self.launch(exec)
    }

    /// The executable graph, its context bound and its stream checked: not capturing into a
    /// graph kgraph did not begin (before anything of a replay is issued).
    fn launchable(&self, op: &str) -> Result<sys::CUgraphExec> {
        let exec = self.exec(op)?;
        let what = || format!("graph {op}");
        self.stream.context().bind_to_thread().map_err(|e| Error::driver(format!("{}: bind context", what()), e))?;
        check_stream(&self.stream, what)?;
        Ok(exec)
    }

    /// Launches `exec` (from [`Self::launchable`]) on the graph's stream.
    fn launch(&self, exec: sys::CUgraphExec) -> Result<()> {
        // SAFETY: `exec` and the stream are live and belong to the context `launchable` bound.
        unsafe { driver::graph::launch(exec, self.stream.cu_stream()) }.map_err(|e| Error::driver("graph replay", e))
    }

    /// Replays once between two timing events and waits: the GPU time of the replay in
    /// milliseconds (the events' resolution is about half a microsecond).
    pub fn replay_timed(&self) -> Result<f32> {
        // Refused before the events are recorded: a foreign capture would record them too.
        let exec = self.launchable("replay_timed")?;
        let (start, end) = match self.timing.get() {
            Some(events) => events,
            None => {
                let ctx = self.stream.context();
                let timed = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
                let start = ctx.new_event(timed).map_err(|e| Error::driver("replay_timed: create event", e))?;
                let end = ctx.new_event(timed).map_err(|e| Error::driver("replay_timed: create event", e))?;
                self.timing.get_or_init(|| (start, end))
            }
        };
        start.record(&self.stream).map_err(|e| Error::driver("replay_timed: record start event", e))?;
        self.launch(exec)?;
        end.record(&self.stream).map_err(|e| Error::driver("replay_timed: record end event", e))?;
        start.elapsed_ms(end).map_err(|e| Error::driver("replay_timed: elapsed time", e))
    }

    /// Number of nodes in the captured graph (`cuGraphGetNodes`).
    pub fn node_count(&self) -> Result<usize> {
        Ok(self.nodes()?.len())
    }

    /// The dependency edges `(from, to)` as indices into the node order of `cuGraphGetNodes`.
    pub fn edges(&self) -> Result<Vec<(usize, usize)>> {
        Ok(self.edges_typed()?.into_iter().map(|(from, to, _)| (from, to)).collect())
    }

    /// The dependency edges with their edge data (`cuGraphGetEdges_v2`): `(from, to, data)`,
    /// `from` and `to` indices into the node order of `cuGraphGetNodes`, in the order of
    /// [`Graph::edges`]. `data.type_` is a `sys::CUgraphDependencyType` value:
    /// `CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC` for a programmatic dependent launch edge (a PDL
    /// launch in the capture; `data.from_port` then names the trigger), 0 (`DEFAULT`) for a full
    /// dependency.
    pub fn edges_typed(&self) -> Result<Vec<(usize, usize, sys::CUgraphEdgeData)>> {
        let nodes = self.nodes()?;
        let index: HashMap<sys::CUgraphNode, usize> = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let (no_nodes, no_data) = (std::ptr::null_mut(), std::ptr::null_mut());
        let mut count = 0usize;
        // SAFETY: `graph` is live; null arrays ask for the edge count only.
        unsafe { driver::graph::get_edges(self.graph, no_nodes, no_nodes, no_data, &mut count) }
            .map_err(|e| Error::driver("graph edges: count", e))?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let mut from = vec![std::ptr::null_mut(); count];
        let mut to = vec![std::ptr::null_mut(); count];
        let blank = sys::CUgraphEdgeData { from_port: 0, to_port: 0, type_: 0, reserved: [0; 5] };
        let mut data = vec![blank; count];
        // SAFETY: the three arrays hold `count` entries each, as the driver is told; it writes
        // at most that many and updates `count` to the number written.
        unsafe {
            driver::graph::get_edges(self.graph, from.as_mut_ptr(), to.as_mut_ptr(), data.as_mut_ptr(), &mut count)
        }
        .map_err(|e| Error::driver("graph edges: list", e))?;
        let lookup = |node: &sys::CUgraphNode| {
            index
                .get(node)
                .copied()
                .ok_or_else(|| Error::graph("edges", "an edge names a node the graph does not list"))
        };
        from.iter().zip(&to).zip(&data).take(count).map(|((f, t), d)| Ok((lookup(f)?, lookup(t)?, *d))).collect()
    }

    /// The captured graph (for inspection with the driver API; do not destroy it).
    pub fn cu_graph(&self) -> sys::CUgraph {
        self.graph
    }

    /// The executable graph (null for an empty graph; do not destroy it).
    pub fn cu_graph_exec(&self) -> sys::CUgraphExec {
        self.exec
    }

    /// The stream the graph replays on.
    pub fn stream(&self) -> &Stream {
        Stream::wrap(&self.stream)
    }

    /// True when the capture recorded no work; such a graph cannot be replayed.
    pub fn is_empty(&self) -> bool {
        self.node_count == 0
    }

    /// The executable graph, or [`GraphError::Failed`](crate::GraphError::Failed) naming `op` when there is none.
    fn exec(&self, op: &str) -> Result<sys::CUgraphExec> {
        if self.exec.is_null() {
            Err(Error::graph(op, "the graph is empty: its capture recorded no work, so there is nothing to launch"))
        } else {
            Ok(self.exec)
        }
    }

    /// The graph's nodes, in `cuGraphGetNodes` order.
    fn nodes(&self) -> Result<Vec<sys::CUgraphNode>> {
        let mut count = 0usize;
        // SAFETY: `graph` is live; a null array asks for the count only.
        unsafe { driver::graph::get_nodes(self.graph, std::ptr::null_mut(), &mut count) }
            .map_err(|e| Error::driver("graph nodes: count", e))?;
        if count == 0 {
            // The driver rejects a listing into an empty array (a dangling pointer).
            return Ok(Vec::new());
        }
        let mut nodes = vec![std::ptr::null_mut(); count];
        // SAFETY: `nodes` holds `count` entries, as the driver is told; it updates `count`.
        unsafe { driver::graph::get_nodes(self.graph, nodes.as_mut_ptr(), &mut count) }
            .map_err(|e| Error::driver("graph nodes: list", e))?;
        nodes.truncate(count);
        Ok(nodes)
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let ctx = self.stream.context();
        ctx.record_err(ctx.bind_to_thread());
        if !self.exec.is_null() {
            // SAFETY: `exec` is owned by this graph and destroyed once; an in-flight replay is
            // allowed (the driver frees it when the replay completes).
            ctx.record_err(unsafe { driver::graph::exec_destroy(self.exec) });
        }
        destroy_graph(self.graph);
        if let Some(g) = self.updated_from.take() {
            destroy_graph(g);
        }
    }
}

/// Ends the capture on `stream` after a successful closure: the captured graph, or
/// [`GraphError::Failed`](crate::GraphError::Failed) when the capture was invalidated.
fn end_capture(stream: &CudaStream) -> Result<sys::CUgraph> {
    make_current(stream);
    // SAFETY: `stream` is live and capturing (begun by `Graph::capture` on this thread).
    match unsafe { driver::stream::end_capture(stream.cu_stream()) } {
        Ok(graph) if !graph.is_null() => Ok(graph),
        Ok(_) => {
            // The driver may hand back no graph for a capture that recorded nothing; stand an
            // empty graph in for it so the rest of `Graph` keeps one shape.
            // SAFETY: the stream's context is current (`make_current` above).
            unsafe { driver::graph::create() }.map_err(|e| Error::driver("end capture: create an empty graph", e))
        }
        Err(DriverError(code @ sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED))
        | Err(DriverError(code @ sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNJOINED)) => Err(Error::graph(
            "end capture",
            format!(
                "{code:?}: an operation inside the capture closure could not be captured (a synchronisation, an eager transfer, a stream forked and not joined back); the stream is usable again"
            ),
        )),
        Err(e) => Err(Error::driver("graph capture: end capture", e)),
    }
}

/// A stream capture begun on this thread and not yet ended, for captures of one library call
/// (an NCCL collective, a cuBLAS GEMM) into a graph of their own: [`OpenCapture::end`] ends it,
/// and dropping it unended (an unwind) ends it and destroys what it recorded.
#[cfg(any(feature = "nccl", feature = "gemm"))]
pub(crate) struct OpenCapture<'a> {
    pub(crate) stream: &'a CudaStream,
}

#[cfg(any(feature = "nccl", feature = "gemm"))]
impl OpenCapture<'_> {
    /// Ends the capture and returns its graph (null when nothing was recorded).
    pub(crate) fn end(self) -> std::result::Result<sys::CUgraph, DriverError> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this.stream` is capturing, begun on this thread by the code that made `this`.
        unsafe { driver::stream::end_capture(this.stream.cu_stream()) }
    }
}

#[cfg(any(feature = "nccl", feature = "gemm"))]
impl Drop for OpenCapture<'_> {
    fn drop(&mut self) {
        abort_capture(self.stream);
    }
}

/// Ends a capture whose closure failed, destroying the partial graph, so the stream leaves
/// capture mode. Errors are ignored: the closure's own error (or panic) is what gets reported.
pub(crate) fn abort_capture(stream: &CudaStream) {
    make_current(stream);
    // SAFETY: `stream` is live; ending a capture that is invalidated or already ended just
    // returns an error, which is ignored.
    if let Ok(graph) = unsafe { driver::stream::end_capture(stream.cu_stream()) } {
        if !graph.is_null() {
            destroy_graph(graph);
        }
    }
}

/// Makes the stream's context current without cudarc's `bind_to_thread`, which first returns
/// (and clears) an error stored by an earlier `Drop`; ending a capture must not be skipped
/// because of one.
fn make_current(stream: &CudaStream) {
    // SAFETY: the context is live (the stream holds it); setting it current has no other effect.
    let _ = unsafe { driver::ctx_set_current(stream.context().cu_ctx()) };
}

/// Destroys a graph template owned by the caller; a failure is stored in no context (there is
/// nothing to report it to) and ignored.
pub(crate) fn destroy_graph(graph: sys::CUgraph) {
    // SAFETY: `graph` is a live graph owned by the caller and destroyed exactly once, here.
    let _ = unsafe { driver::graph::destroy(graph) };
}
