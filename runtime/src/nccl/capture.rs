//! [`Communicator::capture_graph`]: one collective captured into an uninstantiated CUDA graph
//! ([`CollectiveGraph`], defined with the communicator) on a stream the communicator keeps for
//! captures, for graph builders that add it as a child-graph node.

use cudarc::driver::sys;

use crate::context::Stream;

use crate::capture_guard::OwnCapture;
use crate::error::{Error, Result};
use crate::graph::capture::OpenCapture;
use crate::nccl::collective::{Collective, DataType};
use crate::nccl::communicator::{bind, CollectiveGraph, Communicator};

impl Communicator {
    /// Captures one collective (as [`Communicator::issue_raw`] issues it) into a CUDA graph that
    /// is returned uninstantiated, for a graph builder that constructs its graph node by node:
    /// add it with `cuGraphAddChildGraphNode` (which copies it, so the [`CollectiveGraph`] may be
    /// dropped after). The capture runs on a stream of the communicator's (made on first use),
    /// so no other thread's launches on the device stream are recorded. The device stream must
    /// not be capturing ([`GraphError::Failed`](crate::GraphError::Failed)).
    ///
    /// # Safety
    /// As for [`Communicator::issue_raw`], for as long as any graph made from the returned one
    /// may be replayed; and such graphs are dropped before this communicator.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn capture_graph(
        &self,
        collective: Collective,
        dtype: DataType,
        send: sys::CUdeviceptr,
        send_len: usize,
        recv: sys::CUdeviceptr,
        recv_len: usize,
    ) -> Result<CollectiveGraph> {
        self.refuse_in_group("Communicator::capture_graph")?;
        self.device.ensure_not_capturing("Communicator::capture_graph")?;
        bind(&self.device, self.rank, "capture a collective")?;
        let stream = self.capture_stream()?;
        // This rank's own checks first (the capture stream is the communicator's and not yet
        // capturing), then the cross-rank one: a graph's collectives are checked across ranks
        // when the graph is built, one exchange per collective, as eager ones are when issued.
        let count = self.check_local(collective, send_len, recv_len, stream)?;
        self.agree(collective, dtype, count)?;
        // SAFETY: the caller's contract, as documented.
        let captured = unsafe { self.record(collective, dtype, send, recv, count, stream) };
        if captured.is_err() {
            // The other ranks recorded this position; a graph of this rank would lack it.
            self.poison(&format!("the capture of {collective} failed after the cross-rank check"));
        }
        captured
    }

    /// Records the collective (checked and agreed on) into a new capture on `stream`.
    ///
    /// # Safety
    /// As for [`Communicator::capture_graph`]; `count` is what `check_local` returned.
    unsafe fn record(
        &self,
        collective: Collective,
        dtype: DataType,
        send: sys::CUdeviceptr,
        recv: sys::CUdeviceptr,
        count: usize,
        stream: &Stream,
    ) -> Result<CollectiveGraph> {
        stream
            .inner()
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| Error::driver("Communicator::capture_graph: begin capture", e))?;
        // Ends the capture if `enqueue` unwinds, so the stream is not left capturing.
        let open = OpenCapture { stream: stream.inner() };
        // The collective is recorded only into this capture, registered as kgraph's own.
        let issued = OwnCapture::register(stream.inner()).and_then(|own| {
            // SAFETY: the caller's contract, as documented; `stream` belongs to the
            // communicator's device, passed `check_local` before the capture began (and the
            // capture is kgraph's own, registered just above), and records the collective
            // without running it.
            let issued = unsafe { self.enqueue(collective, dtype, send, recv, count, stream) };
            drop(own);
            issued
        });
        let ended = open.end();
        match (issued, ended) {
            (Ok(()), Ok(graph)) if !graph.is_null() => Ok(CollectiveGraph { graph }),
            (Ok(()), Ok(_)) => Err(Error::graph("Communicator::capture_graph", "the capture recorded no graph")),
            (Err(e), ended) => {
                if let Ok(graph) = ended {
                    if !graph.is_null() {
                        drop(CollectiveGraph { graph });
                    }
                }
                Err(e)
            }
            (Ok(()), Err(e)) => {
                Err(Error::driver(format!("Communicator::capture_graph: end capture of {collective}"), e))
            }
        }
    }

    /// The stream captures record on: not the device stream, so that another thread launching
    /// on the device stream meanwhile is not recorded into a collective's graph. NCCL has made
    /// streams of its own already, so this one costs replays nothing. `!Sync` keeps two
    /// captures off it at once.
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
