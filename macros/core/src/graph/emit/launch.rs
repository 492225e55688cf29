//! The per-node private functions every running path calls: `__launch_node_<n>` (on a stream:
//! eager runs and stream capture), `__add_node_<n>` (into a graph under construction) and
//! `__update_node_<n>` (over the node of the instantiated graph, after a scalar, buffer or
//! launch shape changed). A kernel node goes through its handle's checked `__issue`; memset and
//! memcpy nodes through the runtime's stream or graph calls over the struct's own buffers;
//! collective and GEMM nodes (`super::gemm`) through the library's call, captured into a child
//! graph for the built graph.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::fields::{buffer_field, kernel_field, scalar_field};
use super::literal::typed_literal;
use crate::emit_util::{doc_attr, elem_in_hidden_module};
use crate::graph::ir::{Arg, Binding, CollectiveOp, GraphIr, NodeOp, Reduction};

/// The arguments node `n` passes its kernel's `__issue`, in parameter order.
fn launch_args(ir: &GraphIr, n: usize) -> Vec<TokenStream> {
    let node = &ir.nodes[n];
    // A parameter declared `Option<..>` takes `Some(buffer)` or `None` (`"null"` in the spec).
    let nullable = |a: &Arg| node.kernel().and_then(|k| ir.kernels[k].param(&a.param)).is_some_and(|p| p.nullable);
    node.args
        .iter()
        .map(|a| match &a.binding {
            Binding::Buffer { buffer, mutable } => {
                let f = buffer_field(ir, *buffer);
                let arg = if *mutable { quote!(&mut self.#f) } else { quote!(&self.#f) };
                if nullable(a) {
                    quote!(::core::option::Option::Some(#arg))
                } else {
                    arg
                }
            }
            Binding::Null => quote!(::core::option::Option::None),
            Binding::Pinned { buffer } => {
                let f = buffer_field(ir, *buffer);
                quote!(self.#f.device_ptr())
            }
            Binding::PinnedMut { buffer } => {
                let f = buffer_field(ir, *buffer);
                quote!(self.#f.device_ptr_mut())
            }
            Binding::Scalar { scalar } => {
                let f = scalar_field(ir, *scalar);
                quote!(self.#f)
            }
            Binding::Const { value, .. } => typed_literal(value, a.elem),
        })
        .collect()
}

/// The device address of argument `i` of node `n` (a memset or memcpy buffer), through `&self`.
fn arg_addr(ir: &GraphIr, n: usize, i: usize) -> TokenStream {
    let a = &ir.nodes[n].args[i];
    // The buffer's element type as the spec names it (the declaration may name a struct from
    // another module).
    let t = a
        .binding
        .buffer_access()
        .map_or_else(|| elem_in_hidden_module(a.elem), |(b, _)| elem_in_hidden_module(ir.buffers[b].elem));
    match a.binding {
        Binding::Buffer { buffer, .. } => {
            let f = buffer_field(ir, buffer);
            quote!(::kgraph::DeviceIn::<#t>::device_addr(&self.#f))
        }
        // The address `device_ptr_mut` gives a kernel, taken through `&self`.
        Binding::Pinned { buffer } | Binding::PinnedMut { buffer } => {
            let f = buffer_field(ir, buffer);
            quote!(self.#f.device_ptr().addr())
        }
        _ => unreachable!("memset and memcpy arguments are buffers"),
    }
}

/// Byte count of argument `i` of node `n`'s buffer.
fn arg_bytes(ir: &GraphIr, n: usize, i: usize) -> TokenStream {
    let a = &ir.nodes[n].args[i];
    let b = a.binding.buffer_access().expect("a buffer").0;
    let t = elem_in_hidden_module(ir.buffers[b].elem);
    let len = ir.buffers[b].len as usize;
    quote!(#len * ::core::mem::size_of::<#t>())
}

/// The memset count (elements of `elem_size` bytes) of node `n`.
fn memset_count(ir: &GraphIr, n: usize, elem_size: u32) -> TokenStream {
    let bytes = arg_bytes(ir, n, 0);
    quote!((#bytes) / #elem_size as usize)
}

/// `kgraph::nccl::Collective` of `op`.
pub(crate) fn collective_tokens(op: CollectiveOp) -> TokenStream {
    let reduce = |r: Reduction| {
        let v = format_ident!(
            "{}",
            match r {
                Reduction::Sum => "Sum",
                Reduction::Avg => "Avg",
                Reduction::Prod => "Prod",
                Reduction::Max => "Max",
                Reduction::Min => "Min",
            }
        );
        quote!(::kgraph::nccl::ReduceOp::#v)
    };
    match op {
        CollectiveOp::AllReduce(r) => {
            let r = reduce(r);
            quote!(::kgraph::nccl::Collective::AllReduce(#r))
        }
        CollectiveOp::ReduceScatter(r) => {
            let r = reduce(r);
            quote!(::kgraph::nccl::Collective::ReduceScatter(#r))
        }
        CollectiveOp::AllGather => quote!(::kgraph::nccl::Collective::AllGather),
        CollectiveOp::Broadcast(root) => {
            let root = root as usize;
            quote!(::kgraph::nccl::Collective::Broadcast { root: #root })
        }
    }
}

/// The send and receive lengths (elements) of collective node `n`: its one buffer twice when in
/// place.
pub(crate) fn collective_lens(ir: &GraphIr, n: usize) -> (usize, usize) {
    let node = &ir.nodes[n];
    let len = |i: usize| ir.buffers[node.args[i].binding.buffer_access().expect("a buffer").0].len as usize;
    (len(0), len(node.args.len() - 1))
}

/// The arguments of a collective node's `issue_raw`/`capture_graph` before the stream:
/// collective, data type, send address and length, receive address and length.
fn collective_args(ir: &GraphIr, n: usize, op: CollectiveOp) -> TokenStream {
    let coll = collective_tokens(op);
    let t = elem_in_hidden_module(ir.nodes[n].args[0].elem);
    let (sl, rl) = collective_lens(ir, n);
    let recv = ir.nodes[n].args.len() - 1;
    let (sa, ra) = (arg_addr(ir, n, 0), arg_addr(ir, n, recv));
    quote!(#coll, <#t as ::kgraph::nccl::NcclType>::DATA_TYPE, #sa, #sl, #ra, #rl)
}

/// `__launch_node_<n>(stream, opts)`.
pub(crate) fn launch_fn(ir: &GraphIr, n: usize) -> TokenStream {
    let node = &ir.nodes[n];
    let f = format_ident!("__launch_node_{}", n);
    let doc = doc_attr(&format!("Issues node `{}` on `stream` (`opts` for a kernel).", node.name));
    let what = format!("node `{}`", node.name);
    let body = match &node.op {
        NodeOp::Kernel(l) => {
            let k = kernel_field(ir, l.kernel);
            let args = launch_args(ir, n);
            quote! {
                let cfg = self.node_cfgs[#n];
                // SAFETY: `stream` is the device stream, which owns every device buffer of the
                // struct (allocated on it in `new`), or, inside `capture_streamed`, the struct's
                // capturing stream or a side stream forked from it and joined back into it by
                // events: nothing runs during a capture, and the graph replays as a whole on the
                // device stream, ordered with the buffers' transfers (and the buffers are freed
                // only when the struct, graph included, drops). Every other check of the launch
                // is made.
                unsafe { self.#k.__launch_ordered(stream, cfg, opts, #(#args),*) }
            }
        }
        NodeOp::Memset { pattern, elem_size, .. } => {
            let (dst, count) = (arg_addr(ir, n, 0), memset_count(ir, n, *elem_size));
            quote! {
                let _ = opts;
                // SAFETY: the destination is a buffer of the struct holding `count` elements of
                // `elem_size` bytes (its length in bytes, checked at compile time to be a multiple),
                // on (or ordered with) `stream` as for a kernel launch.
                unsafe { ::kgraph::__private::memset_async(stream, #dst, #pattern, #elem_size, #count, #what) }
            }
        }
        NodeOp::Memcpy => {
            let (src, dst, bytes) = (arg_addr(ir, n, 0), arg_addr(ir, n, 1), arg_bytes(ir, n, 0));
            quote! {
                let _ = opts;
                // SAFETY: two distinct buffers of the struct of the same length and dtype (checked
                // at compile time), on (or ordered with) `stream` as for a kernel launch.
                unsafe { ::kgraph::__private::memcpy_async(stream, #dst, #src, #bytes, #what) }
            }
        }
        NodeOp::Collective(op) => {
            let call = collective_args(ir, n, *op);
            quote! {
                let _ = opts;
                // SAFETY: the struct's own device buffers, of the lengths the op takes (checked at
                // compile time and against the world size in `new`), on (or ordered with)
                // `stream`; every rank runs the same spec, so the same collectives in the same
                // order (they are chained in file order by the dataflow).
                unsafe { self.comm.issue_raw(#call, stream) }
            }
        }
        NodeOp::Gemm(op) => super::gemm::launch_body(ir, n, op),
    };
    quote! {
        #doc
        fn #f(&mut self, stream: &::kgraph::Stream, opts: ::kgraph::LaunchOptions) -> ::kgraph::Result<()> {
            #body
        }
    }
}

/// `__add_node_<n>(builder, deps)`.
pub(crate) fn add_node_fn(ir: &GraphIr, n: usize) -> TokenStream {
    let node = &ir.nodes[n];
    let f = format_ident!("__add_node_{}", n);
    let doc = doc_attr(&format!("Adds node `{}` to `builder` with incoming edges `deps`.", node.name));
    let what = format!("build node `{}`", node.name);
    let body = match &node.op {
        NodeOp::Kernel(l) => {
            let k = kernel_field(ir, l.kernel);
            let args = launch_args(ir, n);
            quote! {
                let cfg = self.node_cfgs[#n];
                let opts = if deps.iter().any(|d| d.1 == ::kgraph::expert::EdgeKind::Programmatic) {
                    ::kgraph::LaunchOptions::PDL
                } else {
                    ::kgraph::LaunchOptions::default()
                };
                let target = ::kgraph::expert::Issue::AddNode { builder, deps };
                // SAFETY: every buffer argument is a field of this struct, which also holds the
                // graph built here: the buffers outlive every launch of it and are never moved
                // (replacing one updates the graph first, see `replace_<buffer>`); all work on
                // them is on the device stream, where the graph replays. Programmatic edges only
                // with PDL options (just above), which `__issue` grants only to proven waits.
                unsafe { self.#k.__issue(target, cfg, opts, #(#args),*) }?.node(#what)
            }
        }
        NodeOp::Memset { pattern, elem_size, .. } => {
            let (dst, count) = (arg_addr(ir, n, 0), memset_count(ir, n, *elem_size));
            quote! {
                // SAFETY: a buffer of this struct, which outlives the graph (as for a kernel node),
                // holding `count` elements of `elem_size` bytes.
                unsafe { builder.add_memset(deps, #dst, #pattern, #elem_size, #count) }
            }
        }
        NodeOp::Memcpy => {
            let (src, dst, bytes) = (arg_addr(ir, n, 0), arg_addr(ir, n, 1), arg_bytes(ir, n, 0));
            quote! {
                // SAFETY: two distinct buffers of this struct of `bytes` bytes each, which
                // outlive the graph (as for a kernel node).
                unsafe { builder.add_memcpy(deps, #dst, #src, #bytes) }
            }
        }
        NodeOp::Collective(op) => {
            let call = collective_args(ir, n, *op);
            quote! {
                // SAFETY: as for the eager launch; the captured collective's buffers are the
                // struct's, and the communicator is a field dropped after the graph.
                let child = unsafe { self.comm.capture_graph(#call) }?;
                // SAFETY: a live graph of this context over the struct's buffers.
                unsafe { builder.add_child_raw(deps, child.as_raw()) }
            }
        }
        NodeOp::Gemm(op) => super::gemm::add_body(ir, n, op),
    };
    quote! {
        #doc
        fn #f(
            &mut self,
            builder: &mut ::kgraph::expert::GraphBuilder<'_>,
            deps: &[::kgraph::expert::Dep],
        ) -> ::kgraph::Result<::kgraph::expert::NodeRef> {
            #body
        }
    }
}

/// `__update_node_<n>()`: rewrites node `n` of the instantiated graph from the struct's current
/// scalars, buffers and launch shape (nothing when no graph exists).
pub(crate) fn update_node_fn(ir: &GraphIr, n: usize) -> TokenStream {
    let node = &ir.nodes[n];
    let f = format_ident!("__update_node_{}", n);
    let doc = doc_attr(&format!(
        "Rewrites node `{}` of the instantiated graph from the current scalars, buffers and launch shape.",
        node.name
    ));
    let what = format!("update node `{}`", node.name);
    let body = match &node.op {
        NodeOp::Kernel(l) => {
            let k = kernel_field(ir, l.kernel);
            let args = launch_args(ir, n);
            quote! {
                let cfg = self.node_cfgs[#n];
                let target = ::kgraph::expert::Issue::SetNode { graph, node };
                // SAFETY: as for `__add_node`: the node runs this kernel on this struct's buffers,
                // which outlive the graph; every check of the launch is made again.
                unsafe { self.#k.__issue(target, cfg, ::kgraph::LaunchOptions::default(), #(#args),*) }.map(|_| ())
            }
        }
        NodeOp::Memset { pattern, elem_size, .. } => {
            let (dst, count) = (arg_addr(ir, n, 0), memset_count(ir, n, *elem_size));
            quote! {
                // SAFETY: as for `__add_node`, a memset node of this graph.
                unsafe { graph.set_memset_node(node, #dst, #pattern, #elem_size, #count, #what) }
            }
        }
        NodeOp::Memcpy => {
            let (src, dst, bytes) = (arg_addr(ir, n, 0), arg_addr(ir, n, 1), arg_bytes(ir, n, 0));
            quote! {
                // SAFETY: as for `__add_node`, a memcpy node of this graph.
                unsafe { graph.set_memcpy_node(node, #dst, #src, #bytes, #what) }
            }
        }
        NodeOp::Collective(op) => {
            let call = collective_args(ir, n, *op);
            quote! {
                // SAFETY: as for `__add_node`, a child-graph node of this graph.
                let child = unsafe { self.comm.capture_graph(#call) }?;
                // SAFETY: the same collective over the struct's current buffers.
                unsafe { graph.set_child_graph_node(node, child.as_raw(), #what) }
            }
        }
        NodeOp::Gemm(op) => super::gemm::update_body(ir, n, op, &what),
    };
    quote! {
        #doc
        #[allow(dead_code)]
        fn #f(&mut self) -> ::kgraph::Result<()> {
            let ::core::option::Option::Some(graph) = self.captured.as_ref() else {
                return ::core::result::Result::Ok(());
            };
            let node = self.graph_nodes[#n] as ::kgraph::cudarc::driver::sys::CUgraphNode;
            #body
        }
    }
}

/// The options of a launch: PDL (while enabled) where `pdl`, else the defaults.
pub(crate) fn launch_options(pdl: bool) -> TokenStream {
    if pdl {
        quote!(self.__pdl_options())
    } else {
        quote!(::kgraph::LaunchOptions::default())
    }
}

/// `__pdl_options`, which [`launch_options`] calls for PDL nodes: only generated where used
/// (a spec without PDL nodes has no use for it).
pub(crate) fn pdl_options_fn(ir: &GraphIr) -> Option<TokenStream> {
    ir.nodes.iter().any(|n| n.pdl).then(|| {
        quote! {
            /// The options of a PDL node's launch: PDL while enabled, else plain.
            fn __pdl_options(&self) -> ::kgraph::LaunchOptions {
                if self.pdl_enabled {
                    ::kgraph::LaunchOptions::PDL
                } else {
                    ::kgraph::LaunchOptions::default()
                }
            }
        }
    })
}
