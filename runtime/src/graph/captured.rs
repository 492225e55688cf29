//! [`CapturedGraph`]: a graph struct's instantiated graph, lent out for inspection and timed
//! replays, never for untimed ones.

use std::path::Path;

use cudarc::driver::sys;

use crate::context::{wait_stream_raw, Stream};
use crate::error::Result;
use crate::graph::capture::Graph;

/// The graph a `graph!` struct captured, as its `graph()` lends it: node and edge lists, raw
/// handles for the driver API, the DOT dump and timed replays.
///
/// It has no [`Graph::replay`]: a struct with mapped host buffers knows which of its launches
/// may still be running only because every untimed replay goes through its own `replay`, and
/// its `write_*`/`read_*` methods skip the stream wait otherwise. A replay here would run
/// behind that bookkeeping and let a later `write_*` form `&mut [T]` over memory the replay is
/// reading. [`Self::replay_timed`] waits for the replay it launches, so it leaves nothing in flight.
#[derive(Debug, Clone, Copy)]
pub struct CapturedGraph<'g> {
    graph: &'g Graph,
}

impl<'g> CapturedGraph<'g> {
    /// Lends `graph` with replays restricted as above.
    pub fn new(graph: &'g Graph) -> Self {
        CapturedGraph { graph }
    }

    /// As [`Graph::replay_timed`]: one replay between two timing events, waited for. When it
    /// fails after the replay was launched, the stream is synchronized before the error
    /// returns, so no replay is left running either way.
    pub fn replay_timed(&self) -> Result<f32> {
        let timed = self.graph.replay_timed();
        if timed.is_err() {
            // The error is the one reported; a failing wait here means the context is broken
            // and no later launch runs. Straight to the driver: cudarc's `synchronize` would
            // return an error stored by an earlier drop without waiting.
            let _ = wait_stream_raw(self.graph.stream().inner());
        }
        timed
    }

    /// As [`Graph::node_count`].
    pub fn node_count(&self) -> Result<usize> {
        self.graph.node_count()
    }

    /// As [`Graph::edges`].
    pub fn edges(&self) -> Result<Vec<(usize, usize)>> {
        self.graph.edges()
    }

    /// As [`Graph::edges_typed`].
    pub fn edges_typed(&self) -> Result<Vec<(usize, usize, sys::CUgraphEdgeData)>> {
        self.graph.edges_typed()
    }

    /// As [`Graph::cu_graph`] (do not destroy it).
    pub fn cu_graph(&self) -> sys::CUgraph {
        self.graph.cu_graph()
    }

    /// As [`Graph::cu_graph_exec`] (do not destroy it; launching it is FFI, `unsafe`, and
    /// outside the struct's tracking of launches in flight).
    pub fn cu_graph_exec(&self) -> sys::CUgraphExec {
        self.graph.cu_graph_exec()
    }

    /// As [`Graph::stream`].
    pub fn stream(&self) -> &'g Stream {
        self.graph.stream()
    }

    /// As [`Graph::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.graph.is_empty()
    }

    /// As [`Graph::debug_dot`].
    pub fn debug_dot(&self, path: &Path) -> Result<()> {
        self.graph.debug_dot(path)
    }
}
