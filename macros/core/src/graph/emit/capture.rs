//! Generated stream capture, `capture_streamed`: the multi-stream schedule of
//! `dataflow::schedule` issued on side streams joined by events, recording every spec node's
//! graph node, with the event and capture-info helpers. The graph `capture` builds directly
//! (`super::build`) is the default; this one is kept for comparison.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::input::CodegenInput;
use super::launch::launch_options;
use crate::emit_util::doc_attr;
use crate::graph::dataflow::{Schedule, Step};

/// `capture_streamed`: the stream capture of the branched schedule (for comparison with the
/// graph [`super::build`] constructs; only for specs without conditional nodes).
pub(crate) fn capture_methods(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let n_nodes = ir.nodes.len();
    let (k, e) = (cg.schedule.side_streams, cg.schedule.events);
    // The side streams, then the capturing stream.
    let streams_needed = k + 1;
    let op = format!("{}::capture_streamed: create a capture event", cg.name);
    let capture_doc = doc_attr(
        "Captures every node by stream capture instead of building the graph: independent nodes are issued on side streams forked from and joined back into a capturing stream of the struct's own with events (created on the first call: a process that has created a second stream replays every graph about 5 us slower, which is why [`Self::capture`] creates none; capturing on a stream of its own records no other thread's launches on the device stream), so they become parallel branches; PDL only where a node continues the stream of its sole predecessor. The results equal those of [`Self::capture`] and `run_eager`; for comparison and debugging.",
    );
    let disarm = super::done_wait::disarm(cg.ir);
    quote! {
        #capture_doc
        pub fn capture_streamed(&mut self) -> ::kgraph::Result<()> {
            self.captured = ::core::option::Option::None;
            self.graph_nodes.clear();
            self.built_serialized = ::core::option::Option::None;
            #disarm
            while self.side_streams.len() < #streams_needed {
                // SAFETY: the side streams are used only by this capture (the last one is the
                // capturing stream, the others fork from it and join back into it with events),
                // and nothing runs during a capture: the graph replays on the device stream,
                // where every buffer is allocated and freed.
                let s = unsafe { self.device.new_stream() }?;
                self.side_streams.push(s);
            }
            while self.events.len() < #e {
                // SAFETY: cudarc's context only makes an event, which orders this struct's
                // capture streams among themselves (recorded and waited for inside the capture).
                let ev = unsafe { self.device.context().cuda() }
                    .new_event(::core::option::Option::None)
                    .map_err(|e| ::kgraph::Error::driver(#op, e))?;
                self.events.push(ev);
            }
            // A stream of the struct's own captures, not the device stream: another thread
            // launching on the device stream meanwhile must not be recorded into this graph.
            let origin = self.side_streams[#k].clone();
            let replay = self.device.stream().clone();
            let mut nodes = ::std::vec![0usize; #n_nodes];
            // SAFETY: the struct owns every buffer the closure launches on, and the graph is a
            // field of the same struct (so the buffers outlive every replay); buffers are never
            // reallocated; host access goes through accessors that wait for an in-flight replay
            // or are volatile; the graph replays on the device stream, which orders every
            // replay with the buffers' allocation, transfers and free.
            let graph = unsafe {
                ::kgraph::Graph::capture_on(&origin, &replay, |s| self.__capture_branched(s, &mut nodes))
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
        quote!(self.side_streams[#k].clone())
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
            origin: &::kgraph::Stream,
            nodes: &mut [usize],
        ) -> ::kgraph::Result<()> {
            let streams = [origin.clone(), #(#streams),*];
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
    let capture_op = format!("{}::capture", cg.name);
    quote! {
        #branched

        fn __record_event(
            event: &::kgraph::cudarc::driver::CudaEvent,
            stream: &::kgraph::Stream,
            what: &str,
        ) -> ::kgraph::Result<()> {
            // SAFETY: records one of the struct's capture events on one of its capture streams.
            event.record(unsafe { stream.cuda() }).map_err(|e| ::kgraph::Error::driver(::std::format!("{}: {}", #capture_op, what), e))
        }

        fn __wait_event(
            stream: &::kgraph::Stream,
            event: &::kgraph::cudarc::driver::CudaEvent,
            what: &str,
        ) -> ::kgraph::Result<()> {
            // SAFETY: makes one of the struct's capture streams wait for one of its capture
            // events: the join of the branches inside the capture.
            unsafe { stream.cuda() }.wait(event).map_err(|e| ::kgraph::Error::driver(::std::format!("{}: {}", #capture_op, what), e))
        }

        /// The graph node the last launch on the capturing `stream` created.
        fn __captured_node(
            stream: &::kgraph::Stream,
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
