//! Updating an instantiated [`Graph`] without re-instantiation: one node's kernel parameters
//! or launch shape, a memset or memcpy node's addresses (`cuGraphExec*SetParams`), or the whole
//! graph from a rebuilt description of the same topology (`cuGraphExecUpdate`); and the dump of
//! the graph as the driver holds it (`cuGraphDebugDotPrint`).

use std::ffi::{c_void, CString};
use std::path::Path;

use cudarc::driver::{sys, CudaFunction, DriverError, LaunchConfig};

use crate::driver;
use crate::error::{Error, GraphError, Result};
use crate::graph::build::{copy_1d, kernel_node_params, GraphBuilder};
use crate::graph::capture::{destroy_graph, Graph};

impl Graph {
    /// Binds the graph's context to this thread, for `op`.
    fn bind(&self, op: &str) -> Result<sys::CUgraphExec> {
        if self.cu_graph_exec().is_null() {
            return Err(Error::graph(op, "the graph is empty: there is no executable graph to update"));
        }
        self.stream()
            .inner()
            .context()
            .bind_to_thread()
            .map_err(|e| Error::driver(format!("{op}: bind context"), e))?;
        Ok(self.cu_graph_exec())
    }

    /// Replaces kernel node `node`'s function arguments and launch shape for later replays.
    ///
    /// # Safety
    /// `node` is a kernel node of this graph running `func`; `params` holds one pointer per
    /// kernel parameter to a value of its type (copied by the driver here), and every device
    /// address among them satisfies [`GraphBuilder::add_kernel`]'s contract.
    pub unsafe fn set_kernel_node(
        &self,
        node: sys::CUgraphNode,
        func: &CudaFunction,
        cfg: LaunchConfig,
        params: &mut [*mut c_void],
        what: &str,
    ) -> Result<()> {
        let exec = self.bind(what)?;
        let p = kernel_node_params!(CUDA_KERNEL_NODE_PARAMS, func, cfg, params);
        // SAFETY: `exec` is live and was instantiated from the graph owning `node`; the
        // parameters as the caller promises.
        unsafe { driver::graph::exec_kernel_node_set_params(exec, node, &p) }
            .map_err(|e| Error::driver(what.to_string(), e))
    }

    /// Points memcpy node `node` at new addresses (same byte count) for later replays.
    ///
    /// # Safety
    /// As [`GraphBuilder::add_memcpy`], for `node`, a 1-D memcpy node of this graph.
    pub unsafe fn set_memcpy_node(
        &self,
        node: sys::CUgraphNode,
        dst: sys::CUdeviceptr,
        src: sys::CUdeviceptr,
        bytes: usize,
        what: &str,
    ) -> Result<()> {
        let exec = self.bind(what)?;
        let copy = copy_1d(dst, src, bytes);
        let ctx = self.stream().context().cu_ctx();
        // SAFETY: `exec` was instantiated from the graph owning `node`; addresses as promised.
        unsafe { driver::graph::exec_memcpy_node_set_params(exec, node, &copy, ctx) }
            .map_err(|e| Error::driver(what.to_string(), e))
    }

    /// Points memset node `node` at a new destination (same value and count) for later replays.
    ///
    /// # Safety
    /// As [`GraphBuilder::add_memset`], for `node`, a memset node of this graph.
    pub unsafe fn set_memset_node(
        &self,
        node: sys::CUgraphNode,
        dst: sys::CUdeviceptr,
        value: u32,
        elem_size: u32,
        count: usize,
        what: &str,
    ) -> Result<()> {
        let exec = self.bind(what)?;
        let p = sys::CUDA_MEMSET_NODE_PARAMS { dst, pitch: 0, value, elementSize: elem_size, width: count, height: 1 };
        let ctx = self.stream().context().cu_ctx();
        // SAFETY: `exec` was instantiated from the graph owning `node`; `dst` as promised.
        unsafe { driver::graph::exec_memset_node_set_params(exec, node, &p, ctx) }
            .map_err(|e| Error::driver(what.to_string(), e))
    }

    /// Replaces the work of child-graph node `node` with that of `child` (same topology), for
    /// later replays (`cuGraphExecChildGraphNodeSetParams`). [`GraphError::Failed`] when `node`
    /// is not a child-graph node (a GEMM or collective captured from a stream, as
    /// `capture_streamed` records them, is its last kernel node): nothing is changed then.
    ///
    /// # Safety
    /// As [`GraphBuilder::add_child_raw`], for `node`, a node of this graph.
    pub unsafe fn set_child_graph_node(&self, node: sys::CUgraphNode, child: sys::CUgraph, what: &str) -> Result<()> {
        let exec = self.bind(what)?;
        // SAFETY: `node` is a node of this graph (the caller's promise), which lives as long as
        // `self`.
        let kind = unsafe { driver::graph::node_type(node) }.map_err(|e| Error::driver(what.to_string(), e))?;
        if kind != sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_GRAPH {
            return Err(Error::graph(
                what,
                format!("the node to update is a {kind:?} node, not a child graph (a graph captured from a stream records its last kernel instead); capture it with `capture` or `capture_serialized` to update it in place"),
            ));
        }
        // SAFETY: `exec` was instantiated from the graph owning `node`; `child` as promised.
        unsafe { driver::graph::exec_child_graph_node_set_params(exec, node, child) }
            .map_err(|e| Error::driver(what.to_string(), e))
    }

    /// Updates every node of the executable graph in place from `rebuilt`, a graph of the same
    /// topology built again (new addresses, scalars, launch shapes), through
    /// `cuGraphExecUpdate`. [`GraphError::Update`] when the driver refuses (topology, node type
    /// or function changed): the executable graph is then unchanged and still replayable.
    /// The nodes of the first build keep identifying the executable's nodes.
    ///
    /// # Safety
    /// The addresses of `rebuilt`'s nodes become this graph's, for all of its later replays:
    /// what was promised for them when they were added to `rebuilt` (every allocation outlives
    /// every launch, the event of an event node, a host node's data) holds for the replays of
    /// this graph, as for a child graph (`GraphBuilder::add_child`).
    pub unsafe fn update_from(&mut self, rebuilt: GraphBuilder<'static>, what: &str) -> Result<()> {
        let exec = self.bind(what)?;
        let blank = sys::CUgraphExecUpdateResultInfo {
            result: sys::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS,
            errorNode: std::ptr::null_mut(),
            errorFromNode: std::ptr::null_mut(),
        };
        let mut info = blank;
        let graph = rebuilt.into_raw();
        // SAFETY: `exec` and `graph` are live graphs of the same context; `info` is a valid
        // out-parameter.
        if let Err(DriverError(status)) = unsafe { driver::graph::exec_update(exec, graph, &mut info) } {
            destroy_graph(graph);
            return Err(Error::Graph(GraphError::Update {
                op: what.to_string(),
                reason: format!("{:?} ({status:?})", info.result),
            }));
        }
        if let Some(old) = self.updated_from.replace(graph) {
            destroy_graph(old);
        }
        Ok(())
    }

    /// Writes the graph as the driver holds it (nodes with their parameters, edges with their
    /// types, conditional bodies) as Graphviz DOT to `path` (`cuGraphDebugDotPrint`, verbose).
    /// After [`Graph::update_from`] it is the graph of the last update.
    pub fn debug_dot(&self, path: &Path) -> Result<()> {
        let text = path.to_str().ok_or_else(|| Error::graph("debug_dot", "the path is not UTF-8"))?;
        let c = CString::new(text).map_err(|_| Error::graph("debug_dot", "the path contains a NUL byte"))?;
        let graph = self.updated_from.unwrap_or(self.cu_graph());
        let flags = sys::CUgraphDebugDot_flags::CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE as u32;
        // SAFETY: `graph` is live; `c` is a NUL-terminated path that outlives the call.
        unsafe { driver::graph::debug_dot_print(graph, c.as_ptr(), flags) }
            .map_err(|e| Error::driver(format!("debug_dot: write {text}"), e))
    }
}
