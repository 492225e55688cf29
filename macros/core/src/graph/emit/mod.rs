//! Code generation for a validated graph, reading only the IR and what was derived from it:
//! the struct and its fields (`fields`), the associated constants (`consts`), `new`
//! (`construct`), buffer and scalar accessors (`accessors`), host transfer methods (`host`),
//! and the running API (`run`: eager run, `capture`, `replay`, with `launch`, `capture` and
//! `update`), and a resident spec's `into_resident` and step structs (`resident`). The struct's rustdoc and diagrams are text, built by [`docs`] and [`diagram`].

mod accessors;
pub mod arena;
mod build;
mod capture;
mod construct;
mod consts;
pub mod diagram;
pub mod docs;
pub(crate) mod done_wait;
mod fields;
mod gemm;
mod host;
mod input;
mod launch;
mod literal;
mod resident;
mod run;
mod update;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub use input::CodegenInput;

use crate::emit_util::{doc_attr, elem_in_hidden_module, in_hidden_module};

/// The struct definition: the device, each kernel's handle, buffer and scalar, and the
/// capture state.
fn struct_def(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let name = cg.name;
    let struct_doc = doc_attr(cg.doc);
    let kernel_fields = (0..ir.kernels.len()).map(|k| fields::kernel_field(ir, k));
    let kernel_types = fields::kernel_types(cg);
    let buffer_fields = (0..ir.buffers.len()).map(|b| fields::buffer_field(ir, b));
    let buffer_types = (0..ir.buffers.len()).map(|b| arena::field_type(cg, b));
    let scalar_fields = (0..ir.scalars.len()).map(|s| fields::scalar_field(ir, s));
    let scalar_types = ir.scalars.iter().map(|s| elem_in_hidden_module(s.elem));
    let in_flight_field = fields::InFlight::of(ir).field;
    let comm_field = ir.has_collectives().then(|| {
        quote! {
            /// This rank's NCCL communicator (declared after `captured`, so dropped after the graph).
            comm: ::kgraph::nccl::Communicator,
        }
    });
    let blas_field = gemm::blas_field(ir);
    let control_fields = if ir.controls.is_empty() {
        TokenStream::new()
    } else {
        quote! {
            /// The control kernels that set the conditions of `[[while]]`/`[[if]]` nodes.
            control_kernels: ::kgraph::__private::control::ControlKernels,
            /// One iteration counter per control (0 between launches).
            control_counters: ::kgraph::DeviceBuffer<u32>,
        }
    };
    quote! {
        #struct_doc
        pub struct #name {
            device: ::kgraph::Device,
            #( #kernel_fields: #kernel_types, )*
            #( #buffer_fields: #buffer_types, )*
            #( #scalar_fields: #scalar_types, )*
            /// Side streams of `capture_streamed`, created by its first call (none otherwise).
            #[allow(dead_code)]
            side_streams: ::std::vec::Vec<::kgraph::Stream>,
            /// Fork/join events of `capture_streamed`, created with the side streams.
            #[allow(dead_code)]
            events: ::std::vec::Vec<::kgraph::cudarc::driver::CudaEvent>,
            /// The graph, once `capture`, `capture_serialized` (or `capture_streamed`) ran.
            captured: ::core::option::Option<::kgraph::Graph>,
            /// Which plan built `captured`: `Some(serialized)`, `None` for stream capture.
            built_serialized: ::core::option::Option<bool>,
            /// Each node's launch configuration (`set_launch` changes a kernel node's).
            node_cfgs: ::std::vec::Vec<::kgraph::LaunchConfig>,
            /// The kernel files `reload_kernels` polls (empty unless `KGRAPH_HOT_RELOAD` is set).
            kernel_watch: ::kgraph::expert::reload::KernelWatch,
            #control_fields
            #comm_field
            #blas_field
            /// Launch the `NODE_PDL` nodes with PDL (eager runs and later captures).
            pdl_enabled: bool,
            /// `reload_kernels` swapped in kernels compiled from disk: PDL stays off.
            kernels_reloaded: bool,
            /// Each spec node's node in the captured graph (as an address, so the struct stays
            /// `Send`; a handle is only used together with `captured`).
            graph_nodes: ::std::vec::Vec<usize>,
            #in_flight_field
        }
    }
}

/// The whole expansion for one graph.
pub fn generate(cg: &CodegenInput<'_>) -> TokenStream {
    let name = cg.name;
    let tracked = cg.tracked;
    let struct_def = struct_def(cg);
    let consts = consts::assoc_consts(cg);
    let new = construct::new_fn(cg);
    let accessors = accessors::accessors(cg);
    let host = host::host_methods_tokens(cg);
    let run = run::run_methods(cg);
    let into_resident = resident::into_resident_fn(cg);
    let resident_types = resident::resident_types(cg);
    let body = quote! {
        #struct_def

        impl #name {
            #consts
            #new

            /// The device this graph runs on.
            pub fn device(&self) -> &::kgraph::Device {
                &self.device
            }

            #accessors
            #host
            #run
            #into_resident
        }

        /// Waits for the device stream before the fields drop: the graph and a communicator
        /// must not go while a replay or an eager run of this struct may still be running (the
        /// kernel modules stay loaded in any case: kgraph never unloads one). The wait goes to the driver directly
        /// (an error stored by another drop cannot skip it); a failing wait (a broken context)
        /// is ignored: nothing runs after it.
        impl ::core::ops::Drop for #name {
            fn drop(&mut self) {
                let _ = self.device.__wait_stream_for_drop();
            }
        }
    };
    let public: syn::Visibility = syn::parse_quote!(pub);
    // In a module of its own: its fields (the buffers its graph names, the graph, its events and
    // streams) and private helpers are then private to the generated code, not to the module
    // `graph!` is called in, where safe code could swap a buffer under the graph or replay it
    // behind the bookkeeping.
    let graph = in_hidden_module(&format_ident!("__kgraph_graph_{}", name), name, &public, &[], body);
    quote! {
        #( const _: &[u8] = include_bytes!(#tracked); )*

        #graph
        #resident_types
    }
}
