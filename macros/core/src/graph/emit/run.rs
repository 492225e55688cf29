//! The generated struct's running API: `run_eager` (file order, one stream), `capture` and
//! `capture_serialized` (see `capture`), `replay`, the PDL switch and the inspection methods,
//! with the per-node launch (`launch`) and parameter-update (`update`) functions they call.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::build::{build_helpers, build_methods};
use super::capture::{capture_helpers, capture_methods};
use super::fields::{buffer_field, InFlight};
use super::input::CodegenInput;
use super::launch::{add_node_fn, launch_fn, launch_options, pdl_options_fn, update_node_fn};
use crate::graph::ir::ControlKind;
use crate::graph::plan::Unit;

/// `run_eager`, `capture`, `replay` and their helpers.
pub(crate) fn run_methods(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let n_nodes = ir.nodes.len();
    let launches: Vec<TokenStream> = (0..n_nodes).map(|n| launch_fn(ir, n)).collect();
    let adds: Vec<TokenStream> = (0..n_nodes).map(|n| add_node_fn(ir, n)).collect();
    let updates: Vec<TokenStream> = (0..n_nodes).map(|n| update_node_fn(ir, n)).collect();
    let InFlight { mark: mark_in_flight, mark_eager, .. } = InFlight::of(ir);
    let eager = run_eager(cg, &mark_eager);
    let build = build_methods(cg);
    let build_helpers = build_helpers(cg);
    // Stream capture has no conditional nodes: a spec with `[[while]]`/`[[if]]` is built only.
    let (capture, capture_helpers) = if ir.controls.is_empty() {
        (capture_methods(cg), capture_helpers(cg))
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    let pdl = pdl_switch(cg);
    let replay = replay_and_inspection(cg, &mark_in_flight);
    let reload = reload_kernels(cg);
    quote! {
        #( #launches )*
        #( #adds )*
        #( #updates )*
        #eager
        #build
        #capture
        #pdl
        #replay
        #reload
        #build_helpers
        #capture_helpers
    }
}

/// The eager launch of node `n`.
fn eager_node(cg: &CodegenInput<'_>, n: usize) -> TokenStream {
    let f = format_ident!("__launch_node_{}", n);
    let opts = launch_options(cg.ir.nodes[n].pdl);
    let range = format!("{}::{}", cg.name, cg.ir.nodes[n].name);
    quote! {
        {
            let _range = ::kgraph::expert::nvtx::range(#range);
            self.#f(&stream, #opts)?;
        }
    }
}

fn run_eager(cg: &CodegenInput<'_>, mark_in_flight: &TokenStream) -> TokenStream {
    let ir = cg.ir;
    let graph_name = cg.name.to_string();
    let graph_name = &graph_name;
    let steps = cg.serialized.units.iter().map(|(unit, _)| match *unit {
        Unit::Node(n) => eager_node(cg, n),
        Unit::Control(c) => {
            let control = &ir.controls[c];
            let body: Vec<TokenStream> = control.body().map(|n| eager_node(cg, n)).collect();
            let what = format!("{}::run_eager: read the condition of `{}`", cg.name, control.name);
            match &control.kind {
                ControlKind::Repeat(k) => quote!(for _ in 0..#k { #( #body )* }),
                ControlKind::Until { buffer, max, .. } => {
                    let f = buffer_field(ir, *buffer);
                    let below = control.until_below().unwrap_or(f32::NAN);
                    quote! {
                        for _ in 0..#max {
                            #( #body )*
                            let value = self.device.download(&self.#f).map_err(|e| ::kgraph::Error::in_graph(#graph_name, #what, e))?;
                            // The control kernel's test: continue while `value >= below` (NaN stops).
                            if !(value[0] >= #below) {
                                break;
                            }
                        }
                    }
                }
                ControlKind::If { flag } => {
                    let f = buffer_field(ir, *flag);
                    quote! {
                        let flag = self.device.download(&self.#f).map_err(|e| ::kgraph::Error::in_graph(#graph_name, #what, e))?;
                        if flag[0] != 0 {
                            #( #body )*
                        }
                    }
                }
            }
        }
    });
    quote! {
        /// Runs every node once, in file order, on the device stream (asynchronous; no graph),
        /// the `NODE_PDL` nodes with PDL while it is enabled; a `[[while]]` or `[[if]]` runs its
        /// body as the graph would, reading its condition back to the host (a synchronisation)
        /// where it depends on device data. Gives the same results as a replay of the graph.
        pub fn run_eager(&mut self) -> ::kgraph::Result<()> {
            #mark_in_flight
            let stream = self.device.stream().clone();
            #( #steps )*
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
        /// capture. After a [`Self::reload_kernels`] PDL stays off: the build verified that each
        /// PDL kernel executes `griddepcontrol.wait`, the reloaded code was not.
        pub fn set_pdl_enabled(&mut self, enabled: bool) {
            self.pdl_enabled = enabled && !self.kernels_reloaded;
        }

        #pdl_options
    }
}

/// `replay` and the methods that inspect the captured graph.
fn replay_and_inspection(cg: &CodegenInput<'_>, mark_in_flight: &TokenStream) -> TokenStream {
    let replay_op = format!("{}::replay", cg.name);
    let replay_range = replay_op.clone();
    let replay_call = super::done_wait::replay_call(cg.ir);
    let done_wait_methods = super::done_wait::methods(cg);
    quote! {
        /// Launches the graph on the device stream (asynchronous): the graph of the last
        /// [`Self::capture`], [`Self::capture_serialized`] (or `capture_streamed`).
        /// [`kgraph::GraphError::Failed`] if neither has run.
        pub fn replay(&self) -> ::kgraph::Result<()> {
            let _range = ::kgraph::expert::nvtx::range(#replay_range);
            #mark_in_flight
            match &self.captured {
                ::core::option::Option::Some(graph) => #replay_call,
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

        /// The captured graph (node count, edges, timed replays, raw handles), once captured.
        /// Untimed replays go through [`Self::replay`] only, which keeps track of what is in
        /// flight (see `kgraph::expert::CapturedGraph`).
        pub fn graph(&self) -> ::core::option::Option<::kgraph::expert::CapturedGraph<'_>> {
            self.captured.as_ref().map(::kgraph::expert::CapturedGraph::new)
        }

        /// The captured graph's node of each spec node, indexed like `NODES` (empty before
        /// capture). For inspection with the driver API; the handles belong to [`Self::graph`].
        pub fn graph_nodes(&self) -> ::std::vec::Vec<::kgraph::cudarc::driver::sys::CUgraphNode> {
            self.graph_nodes.iter().map(|&n| n as ::kgraph::cudarc::driver::sys::CUgraphNode).collect()
        }

        #done_wait_methods
    }
}

/// `reload_kernels`: hot reload of the struct's kernels from their `.cu` files (development).
fn reload_kernels(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let graph = cg.name.to_string();
    let fields: Vec<_> = (0..ir.kernels.len()).map(|k| super::fields::kernel_field(ir, k)).collect();
    let fresh: Vec<_> = (0..ir.kernels.len()).map(|k| format_ident!("fresh_{}", k)).collect();
    let types = super::fields::kernel_types(cg);
    let streamed = if ir.controls.is_empty() {
        quote!(::core::option::Option::None => self.capture_streamed()?,)
    } else {
        quote!(::core::option::Option::None => {})
    };
    quote! {
        /// Hot reload (development; `KGRAPH_HOT_RELOAD=1`, see `kgraph::expert::reload`): when a `.cu`
        /// file of this struct's kernels changed since the last call, recompiles every kernel of
        /// the struct from the files on disk (NVRTC), checks each against its declaration's
        /// parameter sizes, swaps them in only when all loaded, turns PDL off for good (the
        /// reloaded code's `griddepcontrol.wait` is unverified), and rebuilds the graph (as it
        /// was built) so the next replay runs the new code: `Ok(true)`. A compile error or a
        /// changed signature is returned as an error and the old kernels and graph stay. With
        /// the variable unset this returns `Ok(false)` after one flag test.
        ///
        /// # Safety
        /// The reloaded code is checked against the declarations only by its parameters' sizes
        /// and count (the full check of a declaration runs at compile time; a kernel with a
        /// parameter of another size, a missing or an extra one is refused with
        /// `kgraph::ModuleError::ParamMismatch`). So each kernel in the files on disk still
        /// keeps what its `#[kernel]` declaration promised of the code the build compiled
        /// (`kgraph::expert::ModuleCache::from_disk` lists it): the parameters' order, types
        /// (a `bool` only where one is declared) and constness; the extents its
        /// `unsafe(extents)` promises, for every launch its `requires` allow; correctness for
        /// every block up to the build's `MAX_THREADS` (a static `__shared__` array indexed by
        /// thread holds that many elements); and no more dynamic shared memory than its
        /// `shared` states (none without one). PDL is off after a reload.
        pub unsafe fn reload_kernels(&mut self) -> ::kgraph::Result<bool> {
            if !::kgraph::expert::reload::enabled() || !self.kernel_watch.changed() {
                return ::core::result::Result::Ok(false);
            }
            // SAFETY: what `from_disk` requires of the code on disk is this function's own
            // contract; and the reloaded handles never run with PDL: they replace the struct's
            // only after `kernels_reloaded` is set and `pdl_enabled` cleared below, before the
            // graph is rebuilt or any launch, and `set_pdl_enabled` keeps PDL off from then on.
            let mut modules = unsafe { ::kgraph::expert::ModuleCache::from_disk(self.device.context()) };
            let loaded: ::kgraph::Result<_> = (|| {
                ::core::result::Result::Ok(( #( #types::load(&mut modules)?, )* ))
            })();
            let ( #( #fresh, )* ) = loaded.map_err(|e| ::kgraph::Error::in_graph(#graph, "hot reload", e))?;
            // The old graph goes below: no replay of it may be running.
            self.device.stream().synchronize_as(::std::format!("{}::reload_kernels: synchronize", #graph))?;
            // The old graph goes before the old modules: it launches their functions. Should
            // the rebuild below fail, no graph is left (`replay` then says so).
            let rebuild = self.captured.take().map(|_| self.built_serialized);
            self.graph_nodes.clear();
            #( self.#fields = #fresh; )*
            // PDL rests on the build's record of each kernel's `griddepcontrol.wait`, which says
            // nothing of the code just compiled: plain launches and full edges from now on.
            self.kernels_reloaded = true;
            self.pdl_enabled = false;
            if let ::core::option::Option::Some(built) = rebuild {
                match built {
                    ::core::option::Option::Some(serialized) => self.__instantiate(serialized)?,
                    #streamed
                }
            }
            ::core::result::Result::Ok(true)
        }
    }
}
