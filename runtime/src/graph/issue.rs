//! Where a checked kernel launch goes ([`Issue`]): onto a stream now, into a graph under
//! construction as a kernel node, or over an existing kernel node of an instantiated graph.
//! A `#[kernel]` handle's hidden `__issue` makes every check of `launch` once and hands the
//! verified argument list to [`issue_kernel`]. Memset and memcpy on a stream, for the graph
//! structs' eager runs and captures, are here too.

use std::ffi::c_void;

use cudarc::driver::{sys, CudaFunction, LaunchConfig};

use crate::capture_guard::check_stream;
use crate::context::Stream;
use crate::driver;
use crate::error::{Error, Result};
use crate::graph::build::{Dep, EdgeKind, GraphBuilder, NodeRef};
use crate::graph::capture::Graph;
use crate::launch::config::{launch_ex, LaunchOptions};

/// Where a launch goes (`'p`: the borrow a conditional body's builder holds of its parent).
#[derive(Debug)]
pub enum Issue<'a, 'p> {
    /// Launched on this stream now.
    Stream(&'a Stream),
    /// Added to `builder` as a kernel node with incoming edges `deps`.
    AddNode {
        /// The graph under construction.
        builder: &'a mut GraphBuilder<'p>,
        /// The node's incoming edges.
        deps: &'a [Dep],
    },
    /// Written over kernel node `node` of the instantiated `graph` (same kernel), for its
    /// later replays.
    SetNode {
        /// The instantiated graph.
        graph: &'a Graph,
        /// A kernel node of it running the same kernel.
        node: sys::CUgraphNode,
    },
}

/// What an [`Issue`] produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issued {
    /// Launched on a stream.
    Launched,
    /// A new kernel node.
    Node(NodeRef),
    /// An existing node updated.
    Updated,
}

impl Issued {
    /// The node an [`Issue::AddNode`] made; [`GraphError::Failed`](crate::GraphError::Failed) naming `what` otherwise.
    pub fn node(self, what: &str) -> Result<NodeRef> {
        match self {
            Issued::Node(n) => Ok(n),
            other => Err(Error::graph(what, format!("expected a new graph node, the launch gave {other:?}"))),
        }
    }
}

/// Issues `function` with `args` to `target`.
///
/// # Safety
/// `args` matches the kernel's parameters in count, order and types; every device address
/// among them is valid for what the kernel accesses, for as long as `target` runs it (the call,
/// or every launch of the graph); with `opts.pdl` (or programmatic edges among `deps`, which
/// require `opts.pdl`) the kernel waits on its grid dependency before touching memory the
/// previous kernels access.
pub unsafe fn issue_kernel(
    target: Issue<'_, '_>,
    function: &CudaFunction,
    kernel: &'static str,
    cfg: LaunchConfig,
    opts: LaunchOptions,
    args: &mut [*mut c_void],
) -> Result<Issued> {
    match target {
        Issue::Stream(stream) => {
            // SAFETY: the caller's contract is `launch_ex`'s.
            let launched = unsafe { launch_ex(stream, function, kernel, cfg, opts, args) };
            launched.map(|()| Issued::Launched)
        }
        Issue::AddNode { builder, deps } => {
            if !opts.pdl && deps.iter().any(|d| d.1 == EdgeKind::Programmatic) {
                return Err(Error::graph(
                    format!("build: kernel node `{kernel}`"),
                    "a programmatic edge ends at a launch without PDL options",
                ));
            }
            // SAFETY: as above; a programmatic edge only into a PDL-checked launch (just above).
            unsafe { builder.add_kernel(deps, function, kernel, cfg, args) }.map(Issued::Node)
        }
        Issue::SetNode { graph, node } => {
            let what = format!("update graph node of kernel `{kernel}`");
            // SAFETY: as above, for a kernel node of `graph` running `function`.
            unsafe { graph.set_kernel_node(node, function, cfg, args, &what) }.map(|()| Issued::Updated)
        }
    }
}

/// Sets `count` elements of `elem_size` bytes (1, 2 or 4) at `dst` to `pattern` on `stream`.
///
/// # Safety
/// `dst` is the device address of at least `count * elem_size` bytes, aligned to `elem_size`,
/// owned by (or ordered with) `stream`.
pub unsafe fn memset_async(
    stream: &Stream,
    dst: sys::CUdeviceptr,
    pattern: u32,
    elem_size: u32,
    count: usize,
    what: &str,
) -> Result<()> {
    let stream = stream.inner();
    stream.context().bind_to_thread().map_err(|e| Error::driver(what.to_string(), e))?;
    check_stream(stream, || what.to_string())?;
    let s = stream.cu_stream();
    // SAFETY: the caller's promise on `dst`; `s` is a live stream of the bound context.
    let r = unsafe {
        match elem_size {
            1 => driver::memory::memset_d8_async(dst, pattern as u8, count, s),
            2 => driver::memory::memset_d16_async(dst, pattern as u16, count, s),
            4 => driver::memory::memset_d32_async(dst, pattern, count, s),
            other => return Err(Error::graph(what, format!("memset element size {other} (must be 1, 2 or 4)"))),
        }
    };
    r.map_err(|e| Error::driver(what.to_string(), e))
}

/// Copies `bytes` bytes from `src` to `dst` on `stream` (device or mapped pinned addresses).
///
/// # Safety
/// Both are addresses of at least `bytes` bytes, not overlapping, ordered with `stream`.
pub unsafe fn memcpy_async(
    stream: &Stream,
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
    what: &str,
) -> Result<()> {
    let stream = stream.inner();
    stream.context().bind_to_thread().map_err(|e| Error::driver(what.to_string(), e))?;
    check_stream(stream, || what.to_string())?;
    // SAFETY: the caller's promise on both addresses; unified addressing resolves their kinds.
    unsafe { driver::memory::memcpy_async(dst, src, bytes, stream.cu_stream()) }
        .map_err(|e| Error::driver(what.to_string(), e))
}
