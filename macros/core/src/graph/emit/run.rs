//! The generated struct's running API: `run_eager` (file order, one stream), `capture` and
//! `capture_serialized` (see `capture`), `replay`, the PDL switch and the inspection methods,
//! with the per-node launch (`launch`) and parameter-update (`update`) functions they call.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::capture::{capture_helpers, capture_methods};
use super::fields::InFlight;
use super::input::CodegenInput;
use super::launch::{launch_fn, launch_options, pdl_options_fn};
use super::update::{set_params_helper, update_fn};

/// `run_eager`, `capture`, `replay` and their helpers.
pub(crate) fn run_methods(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let n_nodes = ir.nodes.len();
    let launches: Vec<TokenStream> = (0..n_nodes).map(|n| launch_fn(ir, n)).collect();
    let updates: Vec<TokenStream> = (0..n_nodes).filter_map(|n| update_fn(ir, n)).collect();
    let mark_in_flight = InFlight::of(ir).mark;
    let eager = run_eager(cg, &mark_in_flight);
    let capture = capture_methods(cg);
    let pdl = pdl_switch(cg);
    let replay = replay_and_inspection(cg, &mark_in_flight);
    let capture_helpers = capture_helpers(cg);
    let set_params = set_params_helper(cg);
    quote! {
        #( #launches )*
        #( #updates )*
        #eager
        #capture
        #pdl
        #replay
        #capture_helpers
        #set_params
    }
}

fn run_eager(cg: &CodegenInput<'_>, mark_in_flight: &TokenStream) -> TokenStream {
    let eager_calls = (0..cg.ir.nodes.len()).map(|n| format_ident!("__launch_node_{}", n));
    let eager_opts = cg.ir.nodes.iter().map(|n| launch_options(n.pdl));
    quote! {
        /// Launches every node once, in file order, on the device stream (asynchronous; no
        /// graph), the `NODE_PDL` nodes with PDL while it is enabled. Gives the same results as
        /// a replay of the captured graph.
        pub fn run_eager(&mut self) -> ::kgraph::Result<()> {
            #mark_in_flight
            let stream = ::std::sync::Arc::clone(self.device.stream());
            #( self.#eager_calls(&stream, #eager_opts)?; )*
            ::core::result::Result::Ok(())
        }
    }
}

/// `pdl_enabled`, `set_pdl_enabled`, and `__pdl_options` where PDL nodes use it.
fn pdl_switch(cg: &CodegenInput<'_>) -> TokenStream {
    let pdl_options = pdl_options_fn(cg.ir);
    quote! {
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
    }
}

/// `replay` and the methods that inspect the captured graph.
fn replay_and_inspection(cg: &CodegenInput<'_>, mark_in_flight: &TokenStream) -> TokenStream {
    let replay_op = format!("{}::replay", cg.name);
    quote! {
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
    }
}
