//! [`GraphBuilder`]: a CUDA graph built node by node through the driver's graph-construction
//! API (no stream, no capture): kernel nodes with explicit dependencies, each edge full or
//! programmatic (PDL), memset and memcpy nodes, child graphs, event-record nodes (profiling) and
//! conditional WHILE / IF nodes whose bodies are builders of their own. One instantiate turns
//! it into a [`Graph`].
//!
//! Every `add_*` that takes device addresses is `unsafe` for the reason [`Graph::capture`] is:
//! the graph keeps the addresses, not borrows. kgraph's generated graph structs call them over
//! buffers they own.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaEvent, CudaFunction, LaunchConfig};

use crate::context::{Context, Stream};
use crate::driver;
use crate::error::{Error, Result};
use crate::graph::capture::Graph;

/// A node of a graph under construction (valid while its builder's graph lives; not `Send`).
/// It remembers its builder: a dependency on a node of another builder (or of a dropped one,
/// whose handle would dangle) is refused before the driver sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeRef {
    node: sys::CUgraphNode,
    builder: u64,
}

impl NodeRef {
    /// The driver handle.
    pub fn cu_node(self) -> sys::CUgraphNode {
        self.node
    }
}

/// The id of the next [`GraphBuilder`], unique in the process (a graph handle may be reused by
/// the driver after its graph is destroyed; an id never is).
static NEXT_BUILDER: AtomicU64 = AtomicU64::new(1);

/// How a node depends on an earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// The later node starts after the earlier one completed and its writes are visible.
    Full,
    /// Programmatic dependent launch: the later kernel may start once every block of the
    /// earlier kernel triggered (`griddepcontrol.launch_dependents`) or exited, and must execute
    /// `griddepcontrol.wait` (which waits for the earlier kernel's completion and memory flush)
    /// before touching memory the earlier one accesses. Only between two kernel nodes.
    Programmatic,
}

impl EdgeKind {
    fn edge_data(self) -> sys::CUgraphEdgeData {
        match self {
            EdgeKind::Full => sys::CUgraphEdgeData { from_port: 0, to_port: 0, type_: 0, reserved: [0; 5] },
            EdgeKind::Programmatic => sys::CUgraphEdgeData {
                from_port: sys::CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC as u8,
                to_port: 0,
                type_: sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC as u8,
                reserved: [0; 5],
            },
        }
    }
}

/// A kernel node description of struct `sys::$ty` (the driver's v2 and v3 layouts have the same
/// fields): `$func` launched with `$cfg` on the parameter pointers `$params`.
macro_rules! kernel_node_params {
    ($ty:ident, $func:expr, $cfg:expr, $params:expr) => {
        sys::$ty {
            func: $func.cu_function(),
            gridDimX: $cfg.grid_dim.0,
            gridDimY: $cfg.grid_dim.1,
            gridDimZ: $cfg.grid_dim.2,
            blockDimX: $cfg.block_dim.0,
            blockDimY: $cfg.block_dim.1,
            blockDimZ: $cfg.block_dim.2,
            sharedMemBytes: $cfg.shared_mem_bytes,
            kernelParams: $params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        }
    };
}
pub(crate) use kernel_node_params;

/// A 1-D copy of `bytes` bytes between two unified-address pointers (device or mapped pinned).
pub(crate) fn copy_1d(dst: sys::CUdeviceptr, src: sys::CUdeviceptr, bytes: usize) -> sys::CUDA_MEMCPY3D {
    let unified = sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED;
    sys::CUDA_MEMCPY3D {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: unified,
        srcHost: std::ptr::null(),
        srcDevice: src,
        srcArray: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        srcPitch: 0,
        srcHeight: 0,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: unified,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst,
        dstArray: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dstPitch: 0,
        dstHeight: 0,
        WidthInBytes: bytes,
        Height: 1,
        Depth: 1,
    }
}

/// One incoming edge of a node being added.
pub type Dep = (NodeRef, EdgeKind);

/// The kind of a conditional node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conditional {
    /// The body runs while the condition is non-zero, tested before each iteration (the first
    /// test sees the default value given at creation).
    While,
    /// The body runs once if the condition is non-zero.
    If,
}

/// The device-side handle of a conditional node's condition (`cudaGraphConditionalHandle`),
/// passed to the kernel that sets it with `cudaGraphSetConditional`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConditionHandle {
    raw: u64,
    /// The builder whose graph created it: only that builder's conditional nodes may use it.
    builder: u64,
}

impl ConditionHandle {
    /// The value a kernel passes to `cudaGraphSetConditional`.
    pub fn raw(self) -> u64 {
        self.raw
    }
}

/// A CUDA graph under construction. Dropping it destroys the graph (a body builder owns
/// nothing: its graph belongs to the conditional node).
///
/// `'p` is the borrow of the builder a conditional node's body was made by
/// ([`GraphBuilder::add_conditional`]): the body graph belongs to the parent's graph, so the
/// body builder cannot outlive (or be used beside) the parent. Top-level builders are
/// `GraphBuilder<'static>`.
#[derive(Debug)]
pub struct GraphBuilder<'p> {
    graph: sys::CUgraph,
    ctx: Arc<CudaContext>,
    /// This builder's id, in each of its [`NodeRef`]s and [`ConditionHandle`]s.
    id: u64,
    /// Destroy `graph` on drop (false for a conditional node's body, owned by the node).
    owned: bool,
    node_count: usize,
    /// The nodes added so far that no later node depends on (kept as nodes are added, so
    /// [`GraphBuilder::sinks`] needs no driver query).
    sinks: Vec<sys::CUgraphNode>,
    /// The nodes a programmatic edge leaves (see [`GraphBuilder::completion_nodes`]).
    pdl_sources: Vec<sys::CUgraphNode>,
    _not_send: PhantomData<*mut ()>,
    _parent: PhantomData<&'p mut ()>,
}

impl GraphBuilder<'static> {
    /// An empty graph in `ctx`.
    pub fn new(ctx: &Context) -> Result<Self> {
        let ctx = ctx.inner();
        ctx.bind_to_thread().map_err(|e| Error::driver("graph build: bind context", e))?;
        // SAFETY: the context is current (bound just above).
        let graph = unsafe { driver::graph::create() }.map_err(|e| Error::driver("graph build: create", e))?;
        Ok(GraphBuilder {
            graph,
            ctx: ctx.clone(),
            id: NEXT_BUILDER.fetch_add(1, Ordering::Relaxed),
            owned: true,
            node_count: 0,
            sinks: Vec::new(),
            pdl_sources: Vec::new(),
            _not_send: PhantomData,
            _parent: PhantomData,
        })
    }
}

impl<'p> GraphBuilder<'p> {
    /// The graph being built.
    pub fn cu_graph(&self) -> sys::CUgraph {
        self.graph
    }

    /// Nodes added so far (bodies of conditional nodes not counted).
    pub fn node_count(&self) -> usize {
        self.node_count
    }

    /// The nodes no edge leaves (the graph's last nodes), for a node that must come after
    /// everything (the done word's). Empty for an empty graph.
    pub fn sinks(&self) -> Result<Vec<NodeRef>> {
        Ok(self.sinks.iter().map(|&node| NodeRef { node, builder: self.id }).collect())
    }

    /// The nodes whose completion is the graph's: its sinks, and every node a programmatic
    /// edge leaves. A kernel after a programmatic edge need not wait for its upstream when it
    /// touches none of that node's memory ([`GraphBuilder::add_kernel`]'s contract), so it may
    /// end first: its own end says nothing of its upstream's. A node that must come after
    /// every other (the done word's) depends on all of these. Empty for an empty graph.
    pub fn completion_nodes(&self) -> Vec<NodeRef> {
        let mut nodes = self.sinks.clone();
        nodes.extend(self.pdl_sources.iter().filter(|n| !self.sinks.contains(n)));
        nodes.into_iter().map(|node| NodeRef { node, builder: self.id }).collect()
    }

    /// Counts a node just added after `deps` and keeps the sinks: `deps` are no longer last.
    fn added(&mut self, deps: &[Dep], nodes: &[sys::CUgraphNode], node: sys::CUgraphNode) -> NodeRef {
        self.node_count += 1;
        self.sinks.retain(|s| !nodes.contains(s));
        self.sinks.push(node);
        for (dep, &source) in deps.iter().zip(nodes) {
            if dep.1 == EdgeKind::Programmatic && !self.pdl_sources.contains(&source) {
                self.pdl_sources.push(source);
            }
        }
        NodeRef { node, builder: self.id }
    }

    /// The driver handles of `deps`, each checked to be a node of this builder's graph:
    /// [`GraphError::Failed`](crate::GraphError::Failed) naming `what` for one of another builder (live or dropped).
    fn dep_nodes(&self, what: &str, deps: &[Dep]) -> Result<Vec<sys::CUgraphNode>> {
        if let Some(foreign) = deps.iter().position(|d| d.0.builder != self.id) {
            return Err(Error::graph(
                format!("build: add {what}"),
                format!("dependency {foreign} is a node of another graph builder"),
            ));
        }
        Ok(deps.iter().map(|d| d.0.node).collect())
    }

    /// Adds `params` with incoming edges `deps`, through `cuGraphAddNode_v2` (edge data).
    ///
    /// # Safety
    /// `params` is a valid node description whose pointers (kernel parameter values, device
    /// addresses) are valid for the call and, for addresses, for every later launch.
    unsafe fn add(&mut self, what: &str, deps: &[Dep], params: &mut sys::CUgraphNodeParams) -> Result<NodeRef> {
        let nodes = self.dep_nodes(what, deps)?;
        let data: Vec<sys::CUgraphEdgeData> = deps.iter().map(|d| d.1.edge_data()).collect();
        let (nodes_ptr, data_ptr) =
            if deps.is_empty() { (std::ptr::null(), std::ptr::null()) } else { (nodes.as_ptr(), data.as_ptr()) };
        // SAFETY: `nodes` and `data` hold `deps.len()` entries (or are null for none), every
        // dependency a node of this graph; `params` as the caller promises.
        let node = unsafe { driver::graph::add_node(self.graph, nodes_ptr, data_ptr, deps.len(), params) }
            .map_err(|e| Error::driver(format!("graph build: add {what}"), e))?;
        Ok(self.added(deps, &nodes, node))
    }

    /// A kernel node running `func` with `cfg` and the parameter values `params` (one pointer
    /// per kernel parameter, to its value; the driver copies the values here).
    ///
    /// # Safety
    /// `params` matches the kernel's parameters in count, order and types, and every device
    /// address among them stays valid (allocated, not freed) for every launch of the graph,
    /// with what the kernel accesses through it inside the allocation, and its dynamic shared
    /// memory within `cfg.shared_mem_bytes`. Every programmatic edge in `deps` comes from a
    /// kernel node, and this kernel executes `griddepcontrol.wait` before touching memory that
    /// node accesses. Dynamic shared memory above the kernel's limit is the caller's to allow
    /// first ([`crate::DynamicSharedLimit::allow`]).
    pub unsafe fn add_kernel(
        &mut self,
        deps: &[Dep],
        func: &CudaFunction,
        name: &str,
        cfg: LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<NodeRef> {
        // SAFETY: all-zero is a valid value of this plain C union; the kernel member is set next.
        let mut p: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        p.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL;
        p.__bindgen_anon_1.kernel = kernel_node_params!(CUDA_KERNEL_NODE_PARAMS_v3, func, cfg, params);
        // SAFETY: a kernel node of a live function with the caller's parameters (`# Safety`).
        unsafe { self.add(&format!("kernel node `{name}`"), deps, &mut p) }
    }

    /// A memset node setting `count` elements of `elem_size` bytes (1, 2 or 4) at `dst` to
    /// `value` (its low `elem_size` bytes).
    ///
    /// # Safety
    /// `dst` is the device address of an allocation of at least `count * elem_size` bytes,
    /// aligned to `elem_size`, valid for every launch of the graph.
    pub unsafe fn add_memset(
        &mut self,
        deps: &[Dep],
        dst: sys::CUdeviceptr,
        value: u32,
        elem_size: u32,
        count: usize,
    ) -> Result<NodeRef> {
        if !matches!(elem_size, 1 | 2 | 4) {
            return Err(Error::graph(
                "build: add memset node",
                format!("element size {elem_size} (must be 1, 2 or 4)"),
            ));
        }
        // SAFETY: all-zero is a valid value of this plain C union; the memset member is set next.
        let mut p: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        p.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMSET;
        p.__bindgen_anon_1.memset = sys::CUDA_MEMSET_NODE_PARAMS_v2 {
            dst,
            pitch: 0,
            value,
            elementSize: elem_size,
            width: count,
            height: 1,
            ctx: self.ctx.cu_ctx(),
        };
        // SAFETY: the caller's promise on `dst` (`# Safety`).
        unsafe { self.add("memset node", deps, &mut p) }
    }

    /// A memcpy node copying `bytes` bytes from `src` to `dst` (device or mapped pinned
    /// addresses: unified addressing tells the driver which).
    ///
    /// # Safety
    /// Both are addresses of allocations of at least `bytes` bytes (device memory or mapped
    /// pinned host memory of this context), valid for every launch, not overlapping.
    pub unsafe fn add_memcpy(
        &mut self,
        deps: &[Dep],
        dst: sys::CUdeviceptr,
        src: sys::CUdeviceptr,
        bytes: usize,
    ) -> Result<NodeRef> {
        let copy = copy_1d(dst, src, bytes);
        // SAFETY: all-zero is a valid value of this plain C union; the memcpy member is set next.
        let mut p: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        p.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMCPY;
        p.__bindgen_anon_1.memcpy =
            sys::CUDA_MEMCPY_NODE_PARAMS { flags: 0, reserved: 0, copyCtx: self.ctx.cu_ctx(), copyParams: copy };
        // SAFETY: the caller's promise on both addresses (`# Safety`).
        unsafe { self.add("memcpy node", deps, &mut p) }
    }

    /// A child-graph node running a copy of `child`'s graph (the driver clones it here).
    ///
    /// # Safety
    /// The addresses in `child`'s nodes satisfy [`GraphBuilder::add_kernel`]'s contract for every
    /// launch of *this* graph (the promises made when they were added covered `child`'s own
    /// launches; the copy outlives `child`).
    pub unsafe fn add_child(&mut self, deps: &[Dep], child: &GraphBuilder<'_>) -> Result<NodeRef> {
        // SAFETY: `child.graph` is a live graph of this context; its addresses as promised.
        unsafe { self.add_child_raw(deps, child.graph) }
    }

    /// A child-graph node running a copy of `child` (the driver clones it here), e.g. the graph
    /// of a captured NCCL collective.
    ///
    /// # Safety
    /// `child` is a live graph of this context whose addresses satisfy
    /// [`GraphBuilder::add_kernel`]'s contract for every launch of this graph.
    pub unsafe fn add_child_raw(&mut self, deps: &[Dep], child: sys::CUgraph) -> Result<NodeRef> {
        if deps.iter().any(|d| d.1 == EdgeKind::Programmatic) {
            return Err(Error::graph("build: add child graph node", "a programmatic edge must end at a kernel node"));
        }
        let nodes = self.dep_nodes("child graph node", deps)?;
        // SAFETY: `nodes` holds `deps.len()` nodes of this graph; `child` as the caller promises.
        let node = unsafe { driver::graph::add_child_graph_node(self.graph, &nodes, child) }
            .map_err(|e| Error::driver("graph build: add child graph node", e))?;
        Ok(self.added(deps, &nodes, node))
    }

    /// A host node: the driver calls `f(data)` on one of its threads when the node's
    /// dependencies are done, and the node's dependents wait until it returns (e.g. to log or
    /// signal a step from inside a replay, or to read what a kernel wrote into mapped memory).
    ///
    /// # Safety
    /// - `f` makes no CUDA call (the driver may fail it or deadlock), does not unwind (it is
    ///   `extern "C"`: catch a panic inside), and returns: the stream waits for it.
    /// - `data` is valid for `f` on another thread for every launch of this graph (the graph
    ///   keeps the pointer, not a borrow), and whatever `f` touches through it is synchronized
    ///   with the host's own use (an atomic, a mutex).
    pub unsafe fn add_host(
        &mut self,
        deps: &[Dep],
        f: unsafe extern "C" fn(*mut c_void),
        data: *mut c_void,
    ) -> Result<NodeRef> {
        if deps.iter().any(|d| d.1 == EdgeKind::Programmatic) {
            return Err(Error::graph("build: add host node", "a programmatic edge must end at a kernel node"));
        }
        let nodes = self.dep_nodes("host node", deps)?;
        let params = sys::CUDA_HOST_NODE_PARAMS { fn_: Some(f), userData: data };
        // SAFETY: `nodes` holds `deps.len()` nodes of this graph; `params` is read during the
        // call; `f` and `data` as the caller promises.
        let node = unsafe { driver::graph::add_host_node(self.graph, &nodes, &params) }
            .map_err(|e| Error::driver("graph build: add host node", e))?;
        Ok(self.added(deps, &nodes, node))
    }

    /// An event-record node (for per-node timing): records `event` when its dependencies are done.
    ///
    /// # Safety
    /// `event` (a live event of this context) is not destroyed while the graph may be launched:
    /// the graph keeps its handle, not a borrow.
    pub unsafe fn add_event_record(&mut self, deps: &[Dep], event: &CudaEvent) -> Result<NodeRef> {
        let nodes = self.dep_nodes("event record node", deps)?;
        // SAFETY: `nodes` holds `deps.len()` nodes of this graph; `event` is live and outlives
        // the graph's launches (the caller's promise).
        let node = unsafe { driver::graph::add_event_record_node(self.graph, &nodes, event.cu_event()) }
            .map_err(|e| Error::driver("graph build: add event record node", e))?;
        Ok(self.added(deps, &nodes, node))
    }

    /// A new condition of this graph, reset to `default` at the start of every launch, for
    /// one conditional node (and the kernel that sets it).
    pub fn create_condition(&mut self, default: bool) -> Result<ConditionHandle> {
        // SAFETY: the graph and its context are live.
        let handle =
            unsafe { driver::graph::conditional_handle_create(self.graph, self.ctx.cu_ctx(), u32::from(default)) }
                .map_err(|e| Error::driver("graph build: create a conditional handle", e))?;
        Ok(ConditionHandle { raw: handle, builder: self.id })
    }

    /// A conditional node of `kind` on `handle` (made by [`Self::create_condition`] on this
    /// builder); returns the node and a builder for its body graph, which belongs to the node
    /// and borrows this builder until it is dropped.
    pub fn add_conditional(
        &mut self,
        deps: &[Dep],
        kind: Conditional,
        handle: ConditionHandle,
    ) -> Result<(NodeRef, GraphBuilder<'_>)> {
        if deps.iter().any(|d| d.1 == EdgeKind::Programmatic) {
            return Err(Error::graph("build: add conditional node", "a programmatic edge must end at a kernel node"));
        }
        if handle.builder != self.id {
            return Err(Error::graph(
                "build: add conditional node",
                "the condition was created by another graph builder (create_condition on this one)",
            ));
        }
        // SAFETY: all-zero is a valid value of this plain C union; the conditional member is set.
        let mut p: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        p.type_ = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL;
        p.__bindgen_anon_1.conditional = sys::CUDA_CONDITIONAL_NODE_PARAMS {
            handle: handle.raw,
            type_: match kind {
                Conditional::While => sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_WHILE,
                Conditional::If => sys::CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_IF,
            },
            size: 1,
            phGraph_out: std::ptr::null_mut(),
            ctx: self.ctx.cu_ctx(),
        };
        // SAFETY: a conditional node description with a handle of this graph; no addresses.
        let node = unsafe { self.add("conditional node", deps, &mut p) }?;
        // SAFETY: the driver filled `phGraph_out` with `size` (1) body graphs owned by the node.
        let body = unsafe { *p.__bindgen_anon_1.conditional.phGraph_out };
        let body = GraphBuilder {
            graph: body,
            ctx: self.ctx.clone(),
            id: NEXT_BUILDER.fetch_add(1, Ordering::Relaxed),
            owned: false,
            node_count: 0,
            sinks: Vec::new(),
            pdl_sources: Vec::new(),
            _not_send: PhantomData,
            _parent: PhantomData,
        };
        Ok((node, body))
    }

    /// Instantiates the graph for launches on `stream` (and uploads it), consuming the builder.
    /// `stream` must be of the builder's context ([`GraphError::Failed`](crate::GraphError::Failed)
    /// otherwise), and should be the stream that owns the memory its nodes use: replays are
    /// ordered with that memory's stream-ordered frees only there.
    pub fn instantiate(mut self, stream: &Stream) -> Result<Graph> {
        if !self.owned {
            return Err(Error::graph("build: instantiate", "a conditional node's body is instantiated with its graph"));
        }
        if stream.context().cu_ctx() != self.ctx.cu_ctx() {
            return Err(Error::graph(
                "build: instantiate",
                "the stream belongs to another context than the graph's nodes (another Device)",
            ));
        }
        self.ctx.bind_to_thread().map_err(|e| Error::driver("graph build: bind context", e))?;
        let exec = if self.node_count == 0 {
            std::ptr::null_mut()
        } else {
            // SAFETY: `graph` is a live, complete graph; default flags.
            unsafe { driver::graph::instantiate(self.graph) }.map_err(|e| {
                Error::driver(format!("graph build: instantiate a graph of {} nodes", self.node_count), e)
            })?
        };
        // The graph now belongs to the `Graph`, which destroys it.
        self.owned = false;
        let graph = Graph::from_parts(self.graph, exec, stream.inner().clone(), self.node_count);
        if exec.is_null() {
            return Ok(graph);
        }
        graph.upload()?;
        Ok(graph)
    }
}

impl GraphBuilder<'_> {
    /// Gives up ownership of the graph (for [`Graph::update_from`], which destroys it).
    pub(crate) fn into_raw(mut self) -> sys::CUgraph {
        self.owned = false;
        self.graph
    }
}

impl Drop for GraphBuilder<'_> {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: `graph` is owned by this builder and destroyed once, here.
            let _ = unsafe { driver::graph::destroy(self.graph) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_descriptions_are_valid_values_without_a_gpu() {
        // `mem::zeroed` panics for a type with an invalid all-zero value (an enum without a 0
        // variant): every description `add_*` zero-initialises must allow it.
        // SAFETY: the check itself is what this test exercises; a union of plain C values.
        let p: sys::CUgraphNodeParams = unsafe { std::mem::zeroed() };
        assert_eq!(p.type_, sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL);
        let c = copy_1d(0x1000, 0x2000, 64);
        assert_eq!((c.dstDevice, c.srcDevice, c.WidthInBytes, c.Height, c.Depth), (0x1000, 0x2000, 64, 1, 1));
        assert_eq!(EdgeKind::Programmatic.edge_data().type_, 1);
        assert_eq!(EdgeKind::Full.edge_data().type_, 0);
    }
}
