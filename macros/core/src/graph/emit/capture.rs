//! Generated capture: `capture` (the multi-stream schedule of `dataflow::schedule`) and
//! `capture_serialized` (`dataflow::serial_schedule`), each issuing the nodes as its schedule
//! says and recording every spec node's graph node, with the event and capture-info helpers.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::input::CodegenInput;
use super::launch::launch_options;
use crate::emit_util::doc_attr;
use crate::graph::dataflow::{Schedule, Step};
use crate::graph::ir::Role;

/// `capture`, `capture_serialized` and the `__capture` they share.
pub(crate) fn capture_methods(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let n_nodes = ir.nodes.len();
    let pinned_note = if ir.buffers.iter().any(|b| matches!(b.role, Role::Pinned | Role::Slot)) {
        " Pinned and slot buffers are read zero-copy at every replay, so host writes to them need no re-capture either."
    } else {
        ""
    };
    let capture_doc = doc_attr(&format!(
        "Captures every node into a CUDA graph and instantiates it, replacing any earlier capture (of either kind). Independent nodes (no path between them in `EDGES`) are issued on separate side streams, forked from and joined back into the device stream with events, so they become parallel branches; the graph's edges are exactly `EDGES`, those in `PDL_EDGES` programmatic (while PDL is enabled). Scalars are captured with their current values and later updated in place by `set_<scalar>`.{pinned_note}"
    ));
    let serialized_doc = doc_attr(&format!(
        "Captures every node on the device stream in file order (the order of `run_eager`), with no parallel branches: the graph is a path of `NODES.len() - 1` edges, the edge into each `NODE_PDL` node programmatic (while PDL is enabled). Replaces any earlier capture; [`Self::replay`] and `set_<scalar>` then work on this graph. For benchmarks (branched vs serialized) and debugging; the results equal those of [`Self::capture`].{pinned_note}"
    ));
    quote! {
        #capture_doc
        pub fn capture(&mut self) -> ::kgraph::Result<()> {
            self.__capture(false)
        }

        #serialized_doc
        pub fn capture_serialized(&mut self) -> ::kgraph::Result<()> {
            self.__capture(true)
        }

        fn __capture(&mut self, serialized: bool) -> ::kgraph::Result<()> {
            self.captured = ::core::option::Option::None;
            self.graph_nodes.clear();
            let origin = ::std::sync::Arc::clone(self.device.stream());
            let mut nodes = ::std::vec![0usize; #n_nodes];
            // SAFETY: the struct owns every buffer the closure launches on, and the graph is a
            // field of the same struct (so the buffers outlive every replay); buffers are never
            // reallocated; host access goes through accessors that wait for an in-flight replay
            // or are volatile.
            let graph = unsafe {
                ::kgraph::Graph::capture(&origin, |s| {
                    if serialized {
                        self.__capture_serialized(s, &mut nodes)
                    } else {
                        self.__capture_branched(s, &mut nodes)
                    }
                })
            }?;
            graph.upload()?;
            self.captured = ::core::option::Option::Some(graph);
            self.graph_nodes = nodes;
            ::core::result::Result::Ok(())
        }
    }
}

/// A private method issuing every node as `schedule` says, recording each node's graph node.
fn capture_steps(cg: &CodegenInput<'_>, schedule: &Schedule, f: &Ident, doc: &str) -> TokenStream {
    let ir = cg.ir;
    let s = schedule;
    let streams = (1..=s.side_streams).map(|k| {
        let k = k - 1;
        quote!(::std::sync::Arc::clone(&self.side_streams[#k]))
    });
    let mut body = TokenStream::new();
    for step in &s.steps {
        body.extend(match *step {
            Step::Record { event, stream } => {
                let what = format!("record event {event} on stream {stream}");
                quote!(Self::__record_event(&self.events[#event], &streams[#stream], #what)?;)
            }
            Step::Wait { stream, event } => {
                let what = format!("make stream {stream} wait for event {event}");
                quote!(Self::__wait_event(&streams[#stream], &self.events[#event], #what)?;)
            }
            Step::Launch { node, stream, pdl } => {
                let launch = format_ident!("__launch_node_{}", node);
                let name = &ir.nodes[node].name;
                let opts = launch_options(pdl);
                quote! {
                    self.#launch(&streams[#stream], #opts)?;
                    nodes[#node] = Self::__captured_node(&streams[#stream], #name)? as usize;
                }
            }
        });
    }
    let doc = doc_attr(doc);
    quote! {
        #doc
        fn #f(
            &mut self,
            origin: &::std::sync::Arc<::kgraph::CudaStream>,
            nodes: &mut [usize],
        ) -> ::kgraph::Result<()> {
            let streams = [::std::sync::Arc::clone(origin), #(#streams),*];
            #body
            ::core::result::Result::Ok(())
        }
    }
}

/// The two schedules' issuing methods, and the event and capture-info helpers they call.
pub(crate) fn capture_helpers(cg: &CodegenInput<'_>) -> TokenStream {
    let branched = capture_steps(
        cg,
        cg.schedule,
        &format_ident!("__capture_branched"),
        "Issues every node on the capturing stream and the side streams, in the dependency schedule, recording each node's graph node.",
    );
    let serialized = capture_steps(
        cg,
        cg.serial,
        &format_ident!("__capture_serialized"),
        "Issues every node on the capturing stream in file order, recording each node's graph node.",
    );
    let capture_op = format!("{}::capture", cg.name);
    quote! {
        #branched
        #serialized

        fn __record_event(
            event: &::kgraph::cudarc::driver::CudaEvent,
            stream: &::kgraph::CudaStream,
            what: &str,
        ) -> ::kgraph::Result<()> {
            event.record(stream).map_err(|e| ::kgraph::Error::driver(::std::format!("{}: {}", #capture_op, what), e))
        }

        fn __wait_event(
            stream: &::kgraph::CudaStream,
            event: &::kgraph::cudarc::driver::CudaEvent,
            what: &str,
        ) -> ::kgraph::Result<()> {
            stream.wait(event).map_err(|e| ::kgraph::Error::driver(::std::format!("{}: {}", #capture_op, what), e))
        }

        /// The graph node the last launch on the capturing `stream` created.
        fn __captured_node(
            stream: &::kgraph::CudaStream,
            node: &str,
        ) -> ::kgraph::Result<::kgraph::cudarc::driver::sys::CUgraphNode> {
            use ::kgraph::cudarc::driver::sys;
            let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
            let mut deps: *const sys::CUgraphNode = ::core::ptr::null();
            let mut edge_data: *const sys::CUgraphEdgeData = ::core::ptr::null();
            let mut count = 0usize;
            // SAFETY: every out-pointer is a live local; the optional id and graph outputs are
            // null, which the driver allows. `stream` is a live stream of the current context.
            let queried = unsafe {
                sys::cuStreamGetCaptureInfo_v3(
                    stream.cu_stream(),
                    &mut status,
                    ::core::ptr::null_mut(),
                    ::core::ptr::null_mut(),
                    &mut deps,
                    &mut edge_data,
                    &mut count,
                )
            };
            queried.result().map_err(|e| {
                ::kgraph::Error::driver(::std::format!("{}: find the graph node of `{}`", #capture_op, node), e)
            })?;
            if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE || count != 1 || deps.is_null() {
                return ::core::result::Result::Err(::kgraph::Error::graph(
                    #capture_op,
                    ::std::format!("after launching node `{}` the capture frontier has {} node(s) (status {:?}); expected exactly its kernel node", node, count, status),
                ));
            }
            // SAFETY: the driver returned `count` (= 1) node handles at `deps`, valid until the
            // next operation on the stream; the handle itself is copied out here.
            ::core::result::Result::Ok(unsafe { *deps })
        }
    }
}
