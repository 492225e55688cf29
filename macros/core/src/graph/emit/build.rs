//! Generated graph construction through the driver's graph API (no streams, no capture):
//! `capture` (the branched plan), `capture_serialized` (file order), the whole-graph
//! `update_graph`, per-node `profile`, and `debug_dot`, over one private `__build_*` method per
//! plan that adds every unit in file order, each with its planned edges.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use super::fields::buffer_field;
use super::input::CodegenInput;
use crate::emit_util::{doc_attr, elem_in_hidden_module};
use crate::graph::ir::{ControlKind, GraphIr};
use crate::graph::plan::{BodyPlan, BuildPlan, Unit};

/// How a build method orders its units.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// As the plan says.
    Plan,
    /// The serialized plan with an event-record node before the first unit and after each
    /// (PDL off), for per-unit GPU times.
    Profiled,
}

/// The dependency slice `&[(var, kind), ...]`; `pdl` edges take the runtime switch `pdl`.
fn deps(vars: &[(Ident, bool)]) -> TokenStream {
    let items = vars
        .iter()
        .map(|(v, prog)| if *prog { quote!((#v, pdl)) } else { quote!((#v, ::kgraph::expert::EdgeKind::Full)) });
    quote!(&[#(#items),*])
}

fn node_var(n: usize) -> Ident {
    format_ident!("n{}", n)
}

/// The statements adding node `n` to `builder` with `deps` and recording it, inside an NVTX
/// range named after the node (feature `nvtx`).
fn add_node(ir: &GraphIr, n: usize, builder: &Ident, deps: TokenStream) -> TokenStream {
    let (f, v) = (format_ident!("__add_node_{}", n), node_var(n));
    let range = format!("build {}", ir.nodes[n].name);
    quote! {
        let #v = {
            let _range = ::kgraph::expert::nvtx::range(#range);
            self.#f(&mut #builder, #deps)?
        };
        nodes[#n] = #v.cu_node() as usize;
    }
}

/// The device address of control `c`'s iteration counter.
fn counter_addr(c: usize) -> TokenStream {
    let offset = Literal::u64_unsuffixed(4 * c as u64);
    quote!(::kgraph::DeviceIn::<u32>::device_addr(&self.control_counters) + #offset)
}

/// The device address of buffer `b`'s first element.
fn buffer_addr(ir: &GraphIr, b: usize) -> TokenStream {
    let f = buffer_field(ir, b);
    let t = elem_in_hidden_module(ir.buffers[b].elem);
    quote!(::kgraph::DeviceIn::<#t>::device_addr(&self.#f))
}

/// Control `c` as a unit of `root` with incoming edges `unit_deps`, bound to `var`.
fn control_unit(ir: &GraphIr, c: usize, body: &BodyPlan, unit_deps: TokenStream, var: &Ident) -> TokenStream {
    let b = format_ident!("body");
    let body_nodes = body.nodes.iter().map(|(n, edges)| {
        let vars: Vec<(Ident, bool)> = edges.iter().map(|&(from, prog)| (node_var(from), prog)).collect();
        add_node(ir, *n, &b, deps(&vars))
    });
    let sinks = deps(&body.sinks.iter().map(|&n| (node_var(n), false)).collect::<Vec<_>>());
    let counter = counter_addr(c);
    let name = &ir.controls[c].name;
    let (setup, kind, tail) = match &ir.controls[c].kind {
        ControlKind::Repeat(k) => (
            quote!(let (#var, mut #b) = root.add_conditional(#unit_deps, ::kgraph::expert::Conditional::While, handle)?;),
            true,
            // SAFETY: the counter is this control's word of `control_counters`, a buffer of the
            // struct (outliving the graph) that only this node touches, 0 between launches.
            quote!(unsafe { self.control_kernels.add_repeat(&mut #b, #sinks, handle, #counter, #k) }?;),
        ),
        ControlKind::Until { buffer, max, .. } => {
            let value = buffer_addr(ir, *buffer);
            let below = ir.controls[c].until_below().unwrap_or(f32::NAN);
            (
                quote!(let (#var, mut #b) = root.add_conditional(#unit_deps, ::kgraph::expert::Conditional::While, handle)?;),
                true,
                // SAFETY: as for `repeat`; the value is the first element of an f32 buffer of
                // the struct (checked at compile time), which outlives the graph.
                quote!(unsafe { self.control_kernels.add_until_below(&mut #b, #sinks, handle, #value, #below, #counter, #max) }?;),
            )
        }
        ControlKind::If { flag } => {
            let flag = buffer_addr(ir, *flag);
            (
                quote! {
                    // SAFETY: the flag is the first element of an i32 buffer of the struct
                    // (checked at compile time), which outlives the graph.
                    let set = unsafe { self.control_kernels.add_if_nonzero(&mut root, #unit_deps, handle, #flag) }?;
                    let (#var, mut #b) = root.add_conditional(&[(set, ::kgraph::expert::EdgeKind::Full)], ::kgraph::expert::Conditional::If, handle)?;
                },
                false,
                TokenStream::new(),
            )
        }
    };
    let _ = name;
    quote! {
        let handle = root.create_condition(#kind)?;
        #setup
        #( #body_nodes )*
        #tail
        // The body borrows `root` until it drops.
        drop(#b);
    }
}

/// One `__build_*` method following `plan` in `mode`.
fn build_fn(cg: &CodegenInput<'_>, plan: &BuildPlan, f: &Ident, mode: Mode, doc: &str) -> TokenStream {
    let ir = cg.ir;
    let root = format_ident!("root");
    let mut body = TokenStream::new();
    if mode == Mode::Profiled {
        // SAFETY (of both event-record calls): `profile` keeps `events` alive until the profiled
        // graph, dropped first, has finished its last replay (it synchronizes before returning).
        body.extend(quote!(let e0 = unsafe { root.add_event_record(&[], &events[0]) }?;));
    }
    for (k, (unit, edges)) in plan.units.iter().enumerate() {
        let var = format_ident!("u{}", k);
        let unit_deps = match mode {
            Mode::Plan => {
                let vars: Vec<(Ident, bool)> =
                    edges.iter().map(|&(from, prog)| (format_ident!("u{}", from), prog)).collect();
                deps(&vars)
            }
            Mode::Profiled => {
                let e = format_ident!("e{}", k);
                quote!(&[(#e, ::kgraph::expert::EdgeKind::Full)])
            }
        };
        body.extend(match *unit {
            Unit::Node(n) => {
                let add = add_node(ir, n, &root, unit_deps);
                let v = node_var(n);
                quote!(#add let #var = #v;)
            }
            Unit::Control(c) => control_unit(ir, c, &plan.bodies[c], unit_deps, &var),
        });
        if mode == Mode::Profiled {
            let (e, i) = (format_ident!("e{}", k + 1), k + 1);
            body.extend(
                quote!(let #e = unsafe { root.add_event_record(&[(#var, ::kgraph::expert::EdgeKind::Full)], &events[#i]) }?;),
            );
        }
    }
    let events_param = (mode == Mode::Profiled).then(|| quote!(events: &[::kgraph::cudarc::driver::CudaEvent],));
    let doc = doc_attr(doc);
    quote! {
        #doc
        #[allow(unused_variables, clippy::let_and_return)]
        fn #f(&mut self, nodes: &mut [usize], #events_param) -> ::kgraph::Result<::kgraph::expert::GraphBuilder<'static>> {
            let pdl = if self.pdl_enabled { ::kgraph::expert::EdgeKind::Programmatic } else { ::kgraph::expert::EdgeKind::Full };
            let mut root = ::kgraph::expert::GraphBuilder::new(self.device.context())?;
            #body
            ::core::result::Result::Ok(root)
        }
    }
}

/// The private build methods of every plan.
pub(crate) fn build_helpers(cg: &CodegenInput<'_>) -> TokenStream {
    let branched = build_fn(
        cg,
        cg.branched,
        &format_ident!("__build_branched"),
        Mode::Plan,
        "Builds the graph of the branched plan (the reduced dataflow), recording each spec node's graph node.",
    );
    let serialized = build_fn(
        cg,
        cg.serialized,
        &format_ident!("__build_serialized"),
        Mode::Plan,
        "Builds the graph of the serialized plan (file order), recording each spec node's graph node.",
    );
    let profiled = build_fn(
        cg,
        cg.serialized,
        &format_ident!("__build_profiled"),
        Mode::Profiled,
        "Builds the serialized graph with an event-record node before the first unit and after each.",
    );
    quote! { #branched #serialized #profiled }
}

/// `capture`, `capture_serialized`, `update_graph`, `profile` and `debug_dot`.
pub(crate) fn build_methods(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let n_nodes = ir.nodes.len();
    let graph = cg.name.to_string();
    let units = cg.serialized.units.len();
    let unit_names = cg.serialized.units.iter().map(|(u, _)| match *u {
        Unit::Node(n) => ir.nodes[n].name.clone(),
        Unit::Control(c) => ir.controls[c].name.clone(),
    });
    let unit_kinds = cg.serialized.units.iter().map(|(u, _)| match *u {
        Unit::Node(n) => ir.node_label(n),
        Unit::Control(c) => match ir.controls[c].kind {
            ControlKind::If { .. } => "if".to_string(),
            _ => "while".to_string(),
        },
    });
    let events = units + 1;
    let (append, append_again) = (super::done_wait::append(ir, false), super::done_wait::append(ir, true));
    let capture_doc = doc_attr(
        "Builds the CUDA graph from the spec's dataflow with the driver's graph API and instantiates it, replacing any earlier graph: kernel, memset and memcpy nodes with exactly the edges of `EDGES` (conditional `[[while]]`/`[[if]]` nodes holding their bodies), those of `PDL_EDGES` programmatic while PDL is enabled — joins and fan-outs included. No stream is created and nothing is captured. Scalars take their current values and are later updated in place by `set_<scalar>`; buffers by `replace_<buffer>`.",
    );
    let serialized_doc = doc_attr(
        "Builds the graph in file order (the order of `run_eager`): every node after the one before it, the edge into a `NODE_PDL` kernel after a kernel programmatic while PDL is enabled. For benchmarks (branched vs serialized) and debugging; the results equal those of [`Self::capture`].",
    );
    quote! {
        #capture_doc
        pub fn capture(&mut self) -> ::kgraph::Result<()> {
            self.__instantiate(false)
        }

        #serialized_doc
        pub fn capture_serialized(&mut self) -> ::kgraph::Result<()> {
            self.__instantiate(true)
        }

        fn __instantiate(&mut self, serialized: bool) -> ::kgraph::Result<()> {
            self.captured = ::core::option::Option::None;
            self.graph_nodes.clear();
            let mut nodes = ::std::vec![0usize; #n_nodes];
            let built = if serialized { self.__build_serialized(&mut nodes)? } else { self.__build_branched(&mut nodes)? };
            #append
            let graph = built.instantiate(self.device.stream())?;
            self.captured = ::core::option::Option::Some(graph);
            self.graph_nodes = nodes;
            self.built_serialized = ::core::option::Option::Some(serialized);
            ::core::result::Result::Ok(())
        }

        /// Rebuilds the graph from the struct's current state (scalars, buffers, launch shapes)
        /// with the plan it was built with, and updates the instantiated graph in place
        /// (`cuGraphExecUpdate`), without re-instantiation. `kgraph::GraphError::Update` when
        /// the driver refuses (the graph then stays as it was), `kgraph::GraphError::Failed` when no
        /// graph was built by [`Self::capture`] or [`Self::capture_serialized`]. The per-node
        /// setters need no call to this: they update their nodes directly.
        pub fn update_graph(&mut self) -> ::kgraph::Result<()> {
            let ::core::option::Option::Some(serialized) = self.built_serialized.filter(|_| self.captured.is_some()) else {
                return ::core::result::Result::Err(::kgraph::Error::graph(
                    ::std::format!("{}::update_graph", #graph),
                    "no graph built by capture() or capture_serialized()",
                ));
            };
            let mut nodes = ::std::vec![0usize; #n_nodes];
            let built = if serialized { self.__build_serialized(&mut nodes)? } else { self.__build_branched(&mut nodes)? };
            #append_again
            let what = ::std::format!("{}::update_graph", #graph);
            match self.captured.as_mut() {
                // SAFETY: `built` was built from this struct's own buffers, scalars, events and
                // kernels, exactly as `capture` builds, and the struct keeps them alive and in
                // place while its graph exists (the graph drops first).
                ::core::option::Option::Some(graph) => unsafe { graph.update_from(built, &what) },
                ::core::option::Option::None => ::core::result::Result::Ok(()),
            }
        }

        /// Per-node GPU time: builds the serialized graph with an event-record node between
        /// consecutive units (PDL off; a `[[while]]`/`[[if]]` counts as one unit), replays it
        /// `iters` times, and reports each unit's median time between its events, with the
        /// median GPU time of one replay of the graph built by [`Self::capture`] (when built)
        /// for reference. Leaves the captured graph as it was.
        pub fn profile(&mut self, iters: usize) -> ::kgraph::Result<::kgraph::expert::Profile> {
            // SAFETY: cudarc's context only makes the timing events, recorded by event-record
            // nodes of the profiled graph and read after its replays.
            let ctx = unsafe { self.device.context().cuda() };
            let events = (0..#events)
                .map(|_| ctx.new_event(::core::option::Option::Some(::kgraph::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)))
                .collect::<::core::result::Result<::std::vec::Vec<_>, _>>()
                .map_err(|e| ::kgraph::Error::driver(::std::format!("{}::profile: create events", #graph), e))?;
            let mut scratch = ::std::vec![0usize; #n_nodes];
            let built = self.__build_profiled(&mut scratch, &events)?;
            let graph = built.instantiate(self.device.stream())?;
            let names: &[&str] = &[#(#unit_names),*];
            let kinds: &[&str] = &[#(#unit_kinds),*];
            let profile = ::kgraph::expert::Profile::measure(#graph, &graph, &events, names, kinds, iters, self.captured.as_ref());
            // The events outlive every replay of the profiled graph (it drops before them): wait
            // for the last one even when the measurement stopped early. A measurement error is
            // reported before the wait's (a sticky fault would otherwise hide where it arose).
            let waited = self.device.synchronize();
            let profile = profile?;
            waited?;
            ::core::result::Result::Ok(profile)
        }

        /// Writes the instantiated graph as the driver holds it (`cuGraphDebugDotPrint`,
        /// verbose: every node's parameters, edge types, conditional bodies) to `path`;
        /// compare with [`Self::DOT`], the spec's dataflow. `kgraph::GraphError::Failed` before a
        /// capture.
        pub fn debug_dot(&self, path: &::std::path::Path) -> ::kgraph::Result<()> {
            match &self.captured {
                ::core::option::Option::Some(graph) => graph.debug_dot(path),
                ::core::option::Option::None => ::core::result::Result::Err(::kgraph::Error::graph(
                    ::std::format!("{}::debug_dot", #graph),
                    "no graph captured yet",
                )),
            }
        }
    }
}
