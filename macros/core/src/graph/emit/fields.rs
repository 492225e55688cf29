//! The generated struct's private fields: their names, the types that hold buffers, and the
//! in-flight flag of graphs with mapped host buffers.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::done_wait::tracks_in_flight;
use super::input::CodegenInput;
use crate::emit_util::ident;
use crate::graph::ir::{GraphIr, Role};
use crate::syntax::naming::{handle_name, ident_text};

/// The field holding kernel `k`'s handle.
pub(crate) fn kernel_field(ir: &GraphIr, k: usize) -> Ident {
    format_ident!("kernel_{}", ident_text(&ir.kernels[k].name))
}

/// `<module>::<Handle>` of each kernel, in `ir.kernels` order.
pub(crate) fn kernel_types(cg: &CodegenInput<'_>) -> Vec<TokenStream> {
    let path = &cg.ir.module;
    let module = crate::emit_util::path_from_hidden_module(quote!(#path));
    cg.ir
        .kernels
        .iter()
        .map(|d| {
            let h = ident(&handle_name(&d.name));
            quote!(#module::#h)
        })
        .collect()
}

/// The field holding buffer `b` (its prefix says which kind of memory).
pub(crate) fn buffer_field(ir: &GraphIr, b: usize) -> Ident {
    let buf = &ir.buffers[b];
    match buf.role {
        Role::Pinned => format_ident!("pinned_{}", buf.name),
        Role::Slot => format_ident!("slot_{}", buf.name),
        Role::PinnedOut => format_ident!("mapped_out_{}", buf.name),
        _ => format_ident!("buf_{}", buf.name),
    }
}

/// The field holding scalar `s`'s current value.
pub(crate) fn scalar_field(ir: &GraphIr, s: usize) -> Ident {
    format_ident!("scalar_{}", ir.scalars[s].name)
}

/// The Rust type that holds a buffer of `role` with elements `t`.
pub(crate) fn storage_type(role: Role, t: &TokenStream) -> TokenStream {
    match role {
        Role::Pinned | Role::PinnedOut => quote!(::kgraph::MappedBuffer<#t>),
        Role::Slot => quote!(::kgraph::PinnedSlot<#t>),
        _ => quote!(::kgraph::DeviceBuffer<#t>),
    }
}

/// The in-flight tracking's pieces (all empty when the graph does not track launches in flight).
pub(crate) struct InFlight {
    /// The struct field.
    pub field: TokenStream,
    /// Its initialiser in `new`.
    pub init: TokenStream,
    /// The statement `replay` begins with.
    pub mark: TokenStream,
    /// The statement `run_eager` begins with: also tells the done word that the stream has
    /// work its word does not cover (the next wait synchronizes the stream).
    pub mark_eager: TokenStream,
}

impl InFlight {
    pub fn of(ir: &GraphIr) -> Self {
        if !tracks_in_flight(ir) {
            return InFlight {
                field: TokenStream::new(),
                init: TokenStream::new(),
                mark: TokenStream::new(),
                mark_eager: TokenStream::new(),
            };
        }
        let (done_field, done_init) = super::done_wait::field_and_init(ir);
        InFlight {
            field: quote! {
                /// A replay or eager run of this graph may still be running: set when one is issued,
                /// cleared when a host method has waited for the device stream. `write_<pinned>` and
                /// `read_<pinned_out>` wait only while it is set (no driver call otherwise).
                in_flight: ::core::cell::Cell<bool>,
                #done_field
            },
            init: quote!(in_flight: ::core::cell::Cell::new(false), #done_init),
            mark: quote!(self.in_flight.set(true);),
            mark_eager: quote!(self.in_flight.set(true); self.done_wait.mark_stream_work();),
        }
    }
}
