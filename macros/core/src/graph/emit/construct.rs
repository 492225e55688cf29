//! The generated `new`: loads the kernels (and the control kernels of conditional nodes),
//! allocates every buffer (zeroed). It creates no stream: `capture` builds the graph directly. A failure keeps its `kgraph::Error` as the source of an
//! `Error::InGraph` naming the graph and the step.

use crate::emit_util::elem_in_hidden_module;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::arena;
use super::fields::{buffer_field, kernel_field, kernel_types, scalar_field, InFlight};
use super::input::CodegenInput;
use super::launch::{collective_lens, collective_tokens};
use super::literal::typed_literal;
use crate::graph::ir::{Buffer, GraphIr, Role, Value};
use crate::syntax::naming::ident_text;

/// The expression allocating `buf` in `new`, its error wrapped with what was being done.
fn buffer_init(graph: &str, buf: &Buffer) -> TokenStream {
    let t = elem_in_hidden_module(buf.elem);
    let len_const = format_ident!("{}", buf.len_const());
    let op = format!("allocate {} buffer `{}` ({} x {})", buf.role.name(), buf.name, buf.len, buf.elem);
    let alloc = match buf.role {
        Role::Pinned | Role::PinnedOut => quote!(::kgraph::MappedBuffer::<#t>::new(device, Self::#len_const)),
        Role::Slot => {
            let zero = typed_literal(&Value::Int(0), buf.elem);
            quote!(::kgraph::PinnedSlot::<#t>::new(device, #zero))
        }
        _ => quote!(device.alloc_zeros::<#t>(Self::#len_const)),
    };
    quote!(#alloc.map_err(|e| ::kgraph::Error::in_graph(#graph, #op, e))?)
}

/// Each node's launch configuration as the spec gives it (zero for memset/memcpy nodes).
fn node_cfgs(ir: &GraphIr) -> TokenStream {
    let cfgs = ir.nodes.iter().map(|n| match n.launch() {
        Some(l) => {
            let ([gx, gy, gz], [bx, by, bz], shared) = (l.grid.value, l.block.value, l.shared);
            quote!(::kgraph::LaunchConfig { grid_dim: (#gx, #gy, #gz), block_dim: (#bx, #by, #bz), shared_mem_bytes: #shared })
        }
        None => quote!(::kgraph::LaunchConfig { grid_dim: (0, 0, 0), block_dim: (0, 0, 0), shared_mem_bytes: 0 }),
    });
    quote!(::std::vec![#(#cfgs),*])
}

/// The control kernels and iteration counters of a spec with `[[while]]`/`[[if]]`.
fn control_init(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    if ir.controls.is_empty() {
        return TokenStream::new();
    }
    let graph = cg.name.to_string();
    let n = ir.controls.len();
    quote! {
        control_kernels: ::kgraph::__private::control::ControlKernels::load(device.context())
            .map_err(|e| ::kgraph::Error::in_graph(#graph, "load the control kernels", e))?,
        control_counters: device.alloc_zeros::<u32>(#n)
            .map_err(|e| ::kgraph::Error::in_graph(#graph, "allocate the loop counters", e))?,
    }
}

/// For a spec with collective nodes: `new`'s bootstrap parameter, the communicator's creation
/// with each collective's lengths checked against the world size, its field initialiser, and
/// `new`'s doc. Empty pieces (and the plain doc) otherwise.
fn communicator(cg: &CodegenInput<'_>) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
    let ir = cg.ir;
    if !ir.has_collectives() {
        let doc = quote! {
            /// Loads the kernels and allocates every buffer (zeroed); scalars take their spec
            /// defaults. Nothing is built yet: call [`Self::capture`] to build the CUDA graph.
        };
        return (TokenStream::new(), TokenStream::new(), TokenStream::new(), doc);
    }
    let graph = cg.name.to_string();
    let checks = ir.nodes.iter().enumerate().filter_map(|(i, n)| {
        let crate::graph::ir::NodeOp::Collective(op) = n.op else { return None };
        let coll = collective_tokens(op);
        let (send, recv) = collective_lens(ir, i);
        let what = format!("node `{}`: check its lengths against the world size", n.name);
        Some(quote! {
            #coll.check_lengths(bootstrap.world_size(), #send, #recv)
                .map_err(|e| ::kgraph::Error::in_graph(#graph, #what, e))?;
        })
    });
    let init = quote! {
        #( #checks )*
        let comm = ::kgraph::nccl::Communicator::new(device, bootstrap)
            .map_err(|e| ::kgraph::Error::in_graph(#graph, "create the NCCL communicator", e))?;
    };
    let doc = quote! {
        /// Loads the kernels, allocates every buffer (zeroed) and creates the NCCL communicator
        /// of this rank from `bootstrap` (`kgraph::nccl::Bootstrap::from_env()` under a launcher,
        /// `Bootstrap::single()` for one process), after checking each collective's lengths
        /// against the world size. Every rank builds the same graph: its collectives run in
        /// file order. Nothing is built yet: call [`Self::capture`]. Needs kgraph's `nccl`
        /// feature.
    };
    (quote!(, bootstrap: &::kgraph::nccl::Bootstrap), init, quote!(comm,), doc)
}

/// `new(device)`.
pub(crate) fn new_fn(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let graph = cg.name.to_string();
    let kernel_fields: Vec<_> = (0..ir.kernels.len()).map(|k| kernel_field(ir, k)).collect();
    let kernel_types = kernel_types(cg);
    let kernel_load_ops = ir.kernels.iter().map(|d| format!("load kernel `{}`", ident_text(&d.name)));
    let buffer_fields = (0..ir.buffers.len()).map(|b| buffer_field(ir, b));
    let buffer_inits = (0..ir.buffers.len())
        .map(|b| arena::planned_init(cg, b).unwrap_or_else(|| buffer_init(&graph, &ir.buffers[b])));
    let arena_alloc = arena::arena_alloc(cg);
    let scalar_fields = (0..ir.scalars.len()).map(|s| scalar_field(ir, s));
    let scalar_inits = ir.scalars.iter().map(|s| typed_literal(&s.default, s.elem));
    let cfgs = node_cfgs(ir);
    let controls = control_init(cg);
    let in_flight_init = InFlight::of(ir).init;
    let (comm_param, comm_init, comm_field, new_doc) = communicator(cg);
    let (blas_init, blas_field) = super::gemm::blas_init(ir, &graph);
    let blas_doc = (!ir.gemm_nodes().is_empty()).then(|| {
        quote! {
            ///
            /// The spec's `gemm` nodes load cuBLAS here (kgraph's `gemm` feature; a machine
            /// without it gets `kgraph::GemmError::Missing`) and allocate one workspace of
            /// `kgraph::gemm::Blas::WORKSPACE_BYTES` per GEMM node.
        }
    });
    quote! {
        #new_doc
        #blas_doc
        pub fn new(device: &::kgraph::Device #comm_param) -> ::kgraph::Result<Self> {
            #comm_init
            #blas_init
            let mut modules = ::kgraph::expert::ModuleCache::new(device.context());
            #( let #kernel_fields = #kernel_types::load(&mut modules)
                .map_err(|e| ::kgraph::Error::in_graph(#graph, #kernel_load_ops, e))?; )*
            #arena_alloc
            ::core::result::Result::Ok(Self {
                #( #kernel_fields, )*
                #( #buffer_fields: #buffer_inits, )*
                #( #scalar_fields: #scalar_inits, )*
                side_streams: ::std::vec::Vec::new(),
                events: ::std::vec::Vec::new(),
                captured: ::core::option::Option::None,
                built_serialized: ::core::option::Option::None,
                node_cfgs: #cfgs,
                kernel_watch: ::kgraph::expert::reload::KernelWatch::new(&[#( &#kernel_types::SOURCE ),*]),
                #comm_field
                #blas_field
                #controls
                pdl_enabled: true,
                kernels_reloaded: false,
                graph_nodes: ::std::vec::Vec::new(),
                #in_flight_init
                device: ::core::clone::Clone::clone(device),
            })
        }
    }
}
