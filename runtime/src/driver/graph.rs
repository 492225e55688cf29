//! Graphs: creation, nodes and edges, instantiation, upload and launch, in-place updates of an
//! executable graph, destruction.

use std::ffi::c_char;

use cudarc::driver::{result, sys, DriverError};

/// `cuGraphCreate`: an empty graph, owned by the caller (destroy it with [`destroy`]).
///
/// # Safety
/// A context is current.
#[inline]
pub(crate) unsafe fn create() -> Result<sys::CUgraph, DriverError> {
    let mut graph: sys::CUgraph = std::ptr::null_mut();
    // SAFETY: `graph` is a valid out-pointer; flags must be 0.
    unsafe { sys::cuGraphCreate(&mut graph, 0) }.result()?;
    Ok(graph)
}

/// `cuGraphDestroy`.
///
/// # Safety
/// `graph` is live, owned by the caller, and destroyed exactly once.
#[inline]
pub(crate) unsafe fn destroy(graph: sys::CUgraph) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { result::graph::destroy(graph) }
}

/// `cuGraphGetNodes`: with a null `nodes`, writes the node count to `count`; otherwise lists up
/// to `*count` nodes into `nodes` and sets `count` to the number written.
///
/// # Safety
/// `graph` is live; `nodes` is null or holds `*count` writable entries.
#[inline]
pub(crate) unsafe fn get_nodes(
    graph: sys::CUgraph,
    nodes: *mut sys::CUgraphNode,
    count: &mut usize,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuGraphGetNodes(graph, nodes, count) }.result()
}

/// `cuGraphGetEdges` (`_v2`, with edge data): with null arrays, writes the edge count to
/// `count`; otherwise lists up to `*count` edges and sets `count` to the number written.
///
/// # Safety
/// `graph` is live; the three arrays are all null or each holds `*count` writable entries.
#[inline]
pub(crate) unsafe fn get_edges(
    graph: sys::CUgraph,
    from: *mut sys::CUgraphNode,
    to: *mut sys::CUgraphNode,
    data: *mut sys::CUgraphEdgeData,
    count: &mut usize,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuGraphGetEdges_v2(graph, from, to, data, count) }.result()
}

/// `cuGraphAddNode` (`_v2`): a node described by `params` after the `count` nodes of `deps`,
/// with the edge data `data` (or null for full dependencies).
///
/// # Safety
/// `graph` is live; `deps` (and `data`, when not null) hold `count` entries, every dependency a
/// node of `graph` (both may be null when `count` is 0); `params` is a valid node description
/// whose pointers are valid for the call and, for device addresses, for every launch of the
/// graph.
#[inline]
pub(crate) unsafe fn add_node(
    graph: sys::CUgraph,
    deps: *const sys::CUgraphNode,
    data: *const sys::CUgraphEdgeData,
    count: usize,
    params: &mut sys::CUgraphNodeParams,
) -> Result<sys::CUgraphNode, DriverError> {
    let mut node = std::ptr::null_mut();
    // SAFETY: `node` is a valid out-pointer; the rest as the caller promises.
    unsafe { sys::cuGraphAddNode_v2(&mut node, graph, deps, data, count, params) }.result()?;
    Ok(node)
}

/// `cuGraphAddChildGraphNode`: a node running a copy of `child` after `deps`.
///
/// # Safety
/// `graph` and `child` are live graphs of one context; `deps` holds nodes of `graph`; `child`'s
/// addresses stay valid for every launch of `graph`.
#[inline]
pub(crate) unsafe fn add_child_graph_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    child: sys::CUgraph,
) -> Result<sys::CUgraphNode, DriverError> {
    let mut node = std::ptr::null_mut();
    // SAFETY: `node` is a valid out-pointer; `deps` holds `deps.len()` nodes; the rest as the
    // caller promises.
    unsafe { sys::cuGraphAddChildGraphNode(&mut node, graph, deps.as_ptr(), deps.len(), child) }.result()?;
    Ok(node)
}

/// `cuGraphAddHostNode`: a node calling `params.fn_(params.userData)` on a driver thread.
///
/// # Safety
/// `graph` is live; `deps` holds nodes of `graph`; the function makes no CUDA call, does not
/// unwind and returns, and its data is valid (and synchronized) for every launch of `graph`.
#[inline]
pub(crate) unsafe fn add_host_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    params: &sys::CUDA_HOST_NODE_PARAMS,
) -> Result<sys::CUgraphNode, DriverError> {
    let mut node = std::ptr::null_mut();
    // SAFETY: `node` is a valid out-pointer; `params` is read during the call; the rest as the
    // caller promises.
    unsafe { sys::cuGraphAddHostNode(&mut node, graph, deps.as_ptr(), deps.len(), params) }.result()?;
    Ok(node)
}

/// `cuGraphAddEventRecordNode`: a node recording `event`.
///
/// # Safety
/// `graph` is live; `deps` holds nodes of `graph`; `event` is a live event of the graph's
/// context that outlives every launch of `graph` (which keeps the handle).
#[inline]
pub(crate) unsafe fn add_event_record_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    event: sys::CUevent,
) -> Result<sys::CUgraphNode, DriverError> {
    let mut node = std::ptr::null_mut();
    // SAFETY: `node` is a valid out-pointer; the rest as the caller promises.
    unsafe { sys::cuGraphAddEventRecordNode(&mut node, graph, deps.as_ptr(), deps.len(), event) }.result()?;
    Ok(node)
}

/// `cuGraphConditionalHandleCreate`: a condition of `graph`, reset to `default` at the start of
/// every launch (`CU_GRAPH_COND_ASSIGN_DEFAULT`).
///
/// # Safety
/// `graph` is a live graph of the live context `ctx`.
#[inline]
pub(crate) unsafe fn conditional_handle_create(
    graph: sys::CUgraph,
    ctx: sys::CUcontext,
    default: u32,
) -> Result<sys::CUgraphConditionalHandle, DriverError> {
    let mut handle: sys::CUgraphConditionalHandle = 0;
    // SAFETY: `handle` is a valid out-pointer; the rest as the caller promises.
    unsafe { sys::cuGraphConditionalHandleCreate(&mut handle, graph, ctx, default, sys::CU_GRAPH_COND_ASSIGN_DEFAULT) }
        .result()?;
    Ok(handle)
}

/// `cuGraphInstantiateWithFlags` with no flags: the executable graph of `graph`, owned by the
/// caller (destroy it with [`exec_destroy`]).
///
/// # Safety
/// `graph` is a live, complete graph (no capture into it under way) of the current context.
#[inline]
pub(crate) unsafe fn instantiate(graph: sys::CUgraph) -> Result<sys::CUgraphExec, DriverError> {
    // SAFETY: the caller's promise; default flags.
    unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) }
}

/// `cuGraphExecDestroy`.
///
/// # Safety
/// `exec` is live, owned by the caller and destroyed once (a replay in flight is allowed: the
/// driver frees it when the replay completes).
#[inline]
pub(crate) unsafe fn exec_destroy(exec: sys::CUgraphExec) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { result::graph::exec_destroy(exec) }
}

/// `cuGraphUpload`: uploads `exec` to the device ahead of its first launch, on `stream`.
///
/// # Safety
/// `exec` and `stream` are live and belong to the current context.
#[inline]
pub(crate) unsafe fn upload(exec: sys::CUgraphExec, stream: sys::CUstream) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { result::graph::upload(exec, stream) }
}

/// `cuGraphLaunch`: launches `exec` on `stream` (asynchronous).
///
/// # Safety
/// `exec` and `stream` are live and belong to the current context; what the graph's nodes touch
/// is valid until the launch finishes.
#[inline]
pub(crate) unsafe fn launch(exec: sys::CUgraphExec, stream: sys::CUstream) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { result::graph::launch(exec, stream) }
}

/// `cuGraphExecKernelNodeSetParams` (`_v2`): new parameters for kernel node `node` of `exec`.
///
/// # Safety
/// `exec` is live and was instantiated from the graph owning `node`; `params` is a valid kernel
/// node description whose pointers are valid for the call and, for device addresses, for every
/// later launch of `exec`.
#[inline]
pub(crate) unsafe fn exec_kernel_node_set_params(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    params: &sys::CUDA_KERNEL_NODE_PARAMS,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuGraphExecKernelNodeSetParams_v2(exec, node, params) }.result()
}

/// `cuGraphExecMemcpyNodeSetParams`: a new copy for memcpy node `node` of `exec`.
///
/// # Safety
/// As [`exec_kernel_node_set_params`], for a memcpy node and the live context `ctx` of `exec`.
#[inline]
pub(crate) unsafe fn exec_memcpy_node_set_params(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    copy: &sys::CUDA_MEMCPY3D,
    ctx: sys::CUcontext,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuGraphExecMemcpyNodeSetParams(exec, node, copy, ctx) }.result()
}

/// `cuGraphExecMemsetNodeSetParams`: a new memset for memset node `node` of `exec`.
///
/// # Safety
/// As [`exec_kernel_node_set_params`], for a memset node and the live context `ctx` of `exec`.
#[inline]
pub(crate) unsafe fn exec_memset_node_set_params(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    params: &sys::CUDA_MEMSET_NODE_PARAMS,
    ctx: sys::CUcontext,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuGraphExecMemsetNodeSetParams(exec, node, params, ctx) }.result()
}

/// `cuGraphExecChildGraphNodeSetParams`: the work of child-graph node `node` of `exec` replaced
/// by `child`'s (same topology).
///
/// # Safety
/// `exec` was instantiated from the graph owning `node`; `child` is a live graph of the same
/// context whose addresses stay valid for every later launch of `exec`.
#[inline]
pub(crate) unsafe fn exec_child_graph_node_set_params(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    child: sys::CUgraph,
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuGraphExecChildGraphNodeSetParams(exec, node, child) }.result()
}

/// `cuGraphNodeGetType`: what kind of node `node` is.
///
/// # Safety
/// `node` is a node of a live graph.
#[inline]
pub(crate) unsafe fn node_type(node: sys::CUgraphNode) -> Result<sys::CUgraphNodeType, DriverError> {
    let mut t = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
    // SAFETY: `t` is a valid out-pointer; `node` as the caller promises.
    unsafe { sys::cuGraphNodeGetType(node, &mut t) }.result()?;
    Ok(t)
}

/// `cuGraphExecUpdate` (`_v2`): every node of `exec` updated in place from `graph`; on refusal
/// `info` says why and `exec` is unchanged.
///
/// # Safety
/// `exec` and `graph` are live graphs of the same context; `graph`'s addresses stay valid for
/// every later launch of `exec`.
#[inline]
pub(crate) unsafe fn exec_update(
    exec: sys::CUgraphExec,
    graph: sys::CUgraph,
    info: &mut sys::CUgraphExecUpdateResultInfo,
) -> Result<(), DriverError> {
    // SAFETY: `info` is a valid out-parameter; the rest as the caller promises.
    unsafe { sys::cuGraphExecUpdate_v2(exec, graph, info) }.result()
}

/// `cuGraphDebugDotPrint`: `graph` written as Graphviz DOT to the file `path`.
///
/// # Safety
/// `graph` is live; `path` is a NUL-terminated string valid for the call.
#[inline]
pub(crate) unsafe fn debug_dot_print(graph: sys::CUgraph, path: *const c_char, flags: u32) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe { sys::cuGraphDebugDotPrint(graph, path, flags) }.result()
}
