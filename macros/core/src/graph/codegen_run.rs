//! Generated launch code: one private launch function per node, `run_eager` (file order, one
//! stream), `capture` (the multi-stream schedule from `dataflow::schedule`, recording each spec
//! node's graph node), `capture_serialized` (`dataflow::serial_schedule`), `replay`, the PDL
//! switch, and the per-node parameter updates behind `set_<scalar>`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::codegen::{buffer_field, doc_attr, elem_ty, kernel_field, scalar_field, typed_literal, CodegenInput};
use super::dataflow::{Schedule, Step};
use super::ir::{Binding, GraphIr, Role};

fn launch_args(ir: &GraphIr, n: usize) -> Vec<TokenStream> {
    ir.nodes[n]
        .args
        .iter()
        .map(|a| match &a.binding {
            Binding::Buffer { buffer, mutable } => {
                let f = buffer_field(ir, *buffer);
                if *mutable {
                    quote!(&mut self.#f)
                } else {
                    quote!(&self.#f)
                }
            }
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

fn launch_fn(ir: &GraphIr, n: usize) -> TokenStream {
    let node = &ir.nodes[n];
    let f = format_ident!("__launch_node_{}", n);
    let k = kernel_field(ir, node.kernel);
    let [gx, gy, gz] = node.grid.value;
    let [bx, by, bz] = node.block.value;
    let shared = node.shared;
    let args = launch_args(ir, n);
    let doc = format!("Launches node `{}` on `stream` with `opts`.", node.name);
    let doc = doc_attr(&doc);
    quote! {
        #doc
        fn #f(&mut self, stream: &::kgraph::CudaStream, opts: ::kgraph::LaunchOptions) -> ::kgraph::Result<()> {
            let cfg = ::kgraph::LaunchConfig {
                grid_dim: (#gx, #gy, #gz),
                block_dim: (#bx, #by, #bz),
                shared_mem_bytes: #shared,
            };
            self.#k.launch_with(stream, cfg, opts, #(#args),*)
        }
    }
}

/// The parameter update of node `n` (only for nodes that take a scalar).
fn update_fn(ir: &GraphIr, n: usize) -> Option<TokenStream> {
    let node = &ir.nodes[n];
    if !node.args.iter().any(|a| matches!(a.binding, Binding::Scalar { .. })) {
        return None;
    }
    let f = format_ident!("__update_node_{}", n);
    let names: Vec<_> = (0..node.args.len()).map(|i| format_ident!("arg_{}", i)).collect();
    let values = node.args.iter().map(|a| {
        let t = elem_ty(a.elem);
        match &a.binding {
            Binding::Buffer { buffer, .. } => {
                let bf = buffer_field(ir, *buffer);
                quote!(::kgraph::cudarc::driver::sys::CUdeviceptr = ::kgraph::DeviceIn::<#t>::device_addr(&self.#bf))
            }
            // The same address `device_ptr_mut` gives the launch, taken through `&self`.
            Binding::Pinned { buffer } | Binding::PinnedMut { buffer } => {
                let bf = buffer_field(ir, *buffer);
                quote!(::kgraph::cudarc::driver::sys::CUdeviceptr = self.#bf.device_ptr().addr())
            }
            Binding::Scalar { scalar } => {
                let sf = scalar_field(ir, *scalar);
                quote!(#t = self.#sf)
            }
            Binding::Const { value, .. } => {
                let v = typed_literal(value, a.elem);
                quote!(#t = #v)
            }
        }
    });
    let count = node.args.len();
    let name = &node.name;
    let doc = format!(
        "Rewrites the kernel parameters of node `{name}` in the instantiated graph with the current scalar values."
    );
    let doc = doc_attr(&doc);
    Some(quote! {
        #doc
        fn #f(&self) -> ::kgraph::Result<()> {
            let ::core::option::Option::Some(graph) = self.captured.as_ref() else {
                return ::core::result::Result::Ok(());
            };
            #( let #names: #values; )*
            let mut params: [*mut ::core::ffi::c_void; #count] = [
                #( ::core::ptr::addr_of!(#names).cast_mut().cast::<::core::ffi::c_void>() ),*
            ];
            let node = self.graph_nodes[#n] as ::kgraph::cudarc::driver::sys::CUgraphNode;
            Self::__set_kernel_node_params(graph, node, &mut params, #name)
        }
    })
}

/// The options of a launch: PDL (while enabled) where `pdl`, else the defaults.
fn launch_options(pdl: bool) -> TokenStream {
    if pdl {
        quote!(self.__pdl_options())
    } else {
        quote!(::kgraph::LaunchOptions::default())
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

/// `run_eager`, `capture`, `replay` and their helpers.
pub fn run_methods(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let gname = cg.name.to_string();
    let n_nodes = ir.nodes.len();
    let launches: Vec<TokenStream> = (0..n_nodes).map(|n| launch_fn(ir, n)).collect();
    let updates: Vec<TokenStream> = (0..n_nodes).filter_map(|n| update_fn(ir, n)).collect();
    let eager_calls = (0..n_nodes).map(|n| format_ident!("__launch_node_{}", n));
    let eager_opts = ir.nodes.iter().map(|n| launch_options(n.pdl));
    // Only generated where used (a spec without PDL nodes has no use for it).
    let pdl_options = ir.nodes.iter().any(|n| n.pdl).then(|| {
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
    });
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
    let (_, _, mark_in_flight) = super::codegen_host::in_flight_parts(ir);
    let replay_op = format!("{gname}::replay");
    let capture_op = format!("{gname}::capture");
    let set_params_op = format!("{gname}::set_<scalar>");
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
        #( #launches )*
        #( #updates )*

        /// Launches every node once, in file order, on the device stream (asynchronous; no
        /// graph), the `NODE_PDL` nodes with PDL while it is enabled. Gives the same results as
        /// a replay of the captured graph.
        pub fn run_eager(&mut self) -> ::kgraph::Result<()> {
            #mark_in_flight
            let stream = ::std::sync::Arc::clone(self.device.stream());
            #( self.#eager_calls(&stream, #eager_opts)?; )*
            ::core::result::Result::Ok(())
        }

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
            let graph = ::kgraph::Graph::capture(&origin, |s| {
                if serialized {
                    self.__capture_serialized(s, &mut nodes)
                } else {
                    self.__capture_branched(s, &mut nodes)
                }
            })?;
            graph.upload()?;
            self.captured = ::core::option::Option::Some(graph);
            self.graph_nodes = nodes;
            ::core::result::Result::Ok(())
        }

        /// Whether the `NODE_PDL` nodes are launched with programmatic dependent launch (true
        /// after [`Self::new`]).
        pub fn pdl_enabled(&self) -> bool {
            self.pdl_enabled
        }

        /// Turns the spec's PDL launches on or off for later [`Self::run_eager`] calls and
        /// captures (off: every launch is plain and every graph edge a full dependency, for
        /// comparison and debugging). A graph already captured keeps its edges until the next
        /// capture.
        pub fn set_pdl_enabled(&mut self, enabled: bool) {
            self.pdl_enabled = enabled;
        }

        #pdl_options

        /// Launches the captured graph on the device stream (asynchronous): the graph of the
        /// last [`Self::capture`] or [`Self::capture_serialized`].
        /// [`kgraph::Error::Graph`] if neither has run.
        pub fn replay(&self) -> ::kgraph::Result<()> {
            #mark_in_flight
            match &self.captured {
                ::core::option::Option::Some(graph) => graph.replay(),
                ::core::option::Option::None => ::core::result::Result::Err(::kgraph::Error::graph(
                    #replay_op,
                    "no graph captured yet: call capture() or capture_serialized() first",
                )),
            }
        }

        /// True once [`Self::capture`] or [`Self::capture_serialized`] has run.
        pub fn is_captured(&self) -> bool {
            self.captured.is_some()
        }

        /// The captured graph (node count, edges, timing, raw handles), once captured.
        pub fn graph(&self) -> ::core::option::Option<&::kgraph::Graph> {
            self.captured.as_ref()
        }

        /// The captured graph's node of each spec node, indexed like `NODES` (empty before
        /// capture). For inspection with the driver API; the handles belong to [`Self::graph`].
        pub fn graph_nodes(&self) -> ::std::vec::Vec<::kgraph::cudarc::driver::sys::CUgraphNode> {
            self.graph_nodes.iter().map(|&n| n as ::kgraph::cudarc::driver::sys::CUgraphNode).collect()
        }

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

        /// Replaces the kernel parameters of `node` in the instantiated graph.
        fn __set_kernel_node_params(
            graph: &::kgraph::Graph,
            node: ::kgraph::cudarc::driver::sys::CUgraphNode,
            params: &mut [*mut ::core::ffi::c_void],
            name: &str,
        ) -> ::kgraph::Result<()> {
            use ::kgraph::cudarc::driver::sys;
            let op = || ::std::format!("{}: update node `{}`", #set_params_op, name);
            graph.stream().context().bind_to_thread().map_err(|e| ::kgraph::Error::driver(op(), e))?;
            // SAFETY: CUDA_KERNEL_NODE_PARAMS is a plain C struct of integers and pointers, for
            // which all-zero is a valid value; it is filled by the driver below.
            let mut p: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { ::core::mem::zeroed() };
            // SAFETY: `node` is a kernel node of `graph`'s CUgraph (recorded during its capture,
            // which `graph` still owns); `p` is a live out-parameter.
            unsafe { sys::cuGraphKernelNodeGetParams_v2(node, &mut p) }
                .result()
                .map_err(|e| ::kgraph::Error::driver(op(), e))?;
            p.kernelParams = params.as_mut_ptr();
            p.extra = ::core::ptr::null_mut();
            // SAFETY: `graph`'s executable graph was instantiated from the CUgraph that owns
            // `node`; `params` holds one pointer per kernel parameter, in declaration order, to
            // a live local of the parameter's type (the driver copies the values during the
            // call); function, grid, block and shared memory are the node's own.
            unsafe { sys::cuGraphExecKernelNodeSetParams_v2(graph.cu_graph_exec(), node, &p) }
                .result()
                .map_err(|e| ::kgraph::Error::driver(op(), e))
        }
    }
}
