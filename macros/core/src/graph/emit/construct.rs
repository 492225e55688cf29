//! The generated `new`: loads the kernels, allocates every buffer (zeroed), creates the side
//! streams and events capture needs. A failure keeps its `kgraph::Error` as the source of an
//! `Error::InGraph` naming the graph and the step.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::fields::{buffer_field, kernel_field, kernel_types, scalar_field, InFlight};
use super::input::CodegenInput;
use super::literal::typed_literal;
use crate::graph::ir::{Buffer, Role, Value};
use crate::syntax::naming::ident_text;

/// The expression allocating `buf` in `new`, its error wrapped with what was being done.
fn buffer_init(graph: &str, buf: &Buffer) -> TokenStream {
    let t = buf.elem.rust_ident();
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

/// The side streams and events capture uses, created up front so capture creates nothing.
fn capture_resources(cg: &CodegenInput<'_>) -> (TokenStream, TokenStream) {
    let side_init = if cg.schedule.side_streams == 0 {
        quote!(::std::vec::Vec::new())
    } else {
        let k = cg.schedule.side_streams;
        // SAFETY (of the generated block): the side streams are used only by this struct's
        // capture, which forks each from the device stream and joins it back with events, so
        // every use of a buffer on them is ordered between the buffer's allocation and its free,
        // both on the device stream.
        quote!((0..#k)
            .map(|_| unsafe { device.new_stream() })
            .collect::<::kgraph::Result<::std::vec::Vec<_>>>()?)
    };
    let event_init = if cg.schedule.events == 0 {
        quote!(::std::vec::Vec::new())
    } else {
        let e = cg.schedule.events;
        let op = format!("{}::new: create a capture event", cg.name);
        quote!((0..#e)
            .map(|_| device.context().new_event(::core::option::Option::None).map_err(|e| ::kgraph::Error::driver(#op, e)))
            .collect::<::kgraph::Result<::std::vec::Vec<_>>>()?)
    };
    (side_init, event_init)
}

/// `new(device)`.
pub(crate) fn new_fn(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let graph = cg.name.to_string();
    let kernel_fields: Vec<_> = (0..ir.kernels.len()).map(|k| kernel_field(ir, k)).collect();
    let kernel_types = kernel_types(cg);
    let kernel_load_ops = ir.kernels.iter().map(|d| format!("load kernel `{}`", ident_text(&d.name)));
    let buffer_fields = (0..ir.buffers.len()).map(|b| buffer_field(ir, b));
    let buffer_inits = ir.buffers.iter().map(|b| buffer_init(&graph, b));
    let scalar_fields = (0..ir.scalars.len()).map(|s| scalar_field(ir, s));
    let scalar_inits = ir.scalars.iter().map(|s| typed_literal(&s.default, s.elem));
    let (side_init, event_init) = capture_resources(cg);
    let in_flight_init = InFlight::of(ir).init;
    quote! {
        /// Loads the kernels and allocates every buffer (zeroed); scalars take their spec
        /// defaults. Nothing is captured yet: call [`Self::capture`] to build the CUDA graph.
        pub fn new(device: &::kgraph::Device) -> ::kgraph::Result<Self> {
            let mut modules = ::kgraph::ModuleCache::new(device.context());
            #( let #kernel_fields = #kernel_types::load(&mut modules)
                .map_err(|e| ::kgraph::Error::in_graph(#graph, #kernel_load_ops, e))?; )*
            ::core::result::Result::Ok(Self {
                #( #kernel_fields, )*
                #( #buffer_fields: #buffer_inits, )*
                #( #scalar_fields: #scalar_inits, )*
                side_streams: #side_init,
                events: #event_init,
                captured: ::core::option::Option::None,
                pdl_enabled: true,
                graph_nodes: ::std::vec::Vec::new(),
                #in_flight_init
                device: ::core::clone::Clone::clone(device),
            })
        }
    }
}
