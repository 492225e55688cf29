//! One private launch function per node (`__launch_node_<n>`), and the options each launch
//! is issued with (PDL while enabled, for the spec's PDL nodes).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::fields::{buffer_field, kernel_field, scalar_field};
use super::literal::typed_literal;
use crate::emit_util::doc_attr;
use crate::graph::ir::{Binding, GraphIr};

/// The arguments node `n` passes its kernel's `launch_with`, in parameter order.
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

/// `__launch_node_<n>(stream, opts)`: node `n`'s kernel with its launch configuration,
/// through the handle's `__launch_ordered` (the checked launch less the stream check, which
/// would refuse the side streams of a capture).
pub(crate) fn launch_fn(ir: &GraphIr, n: usize) -> TokenStream {
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
            // SAFETY: `stream` is the device stream, which owns every device buffer of the
            // struct (allocated on it in `new`), or, inside `capture`, one of the struct's side
            // streams, forked from the device stream by an event recorded after everything issued
            // on it before the capture and joined back into it by an event before the capture
            // ends, so the graph's work on it is ordered with the buffers' owning stream in both
            // directions (and the buffers are freed only when the struct, graph included, drops).
            // Every other check of the launch is made.
            unsafe { self.#k.__launch_ordered(stream, cfg, opts, #(#args),*) }
        }
    }
}

/// The options of a launch: PDL (while enabled) where `pdl`, else the defaults.
pub(crate) fn launch_options(pdl: bool) -> TokenStream {
    if pdl {
        quote!(self.__pdl_options())
    } else {
        quote!(::kgraph::LaunchOptions::default())
    }
}

/// `__pdl_options`, which [`launch_options`] calls for PDL nodes: only generated where used
/// (a spec without PDL nodes has no use for it).
pub(crate) fn pdl_options_fn(ir: &GraphIr) -> Option<TokenStream> {
    ir.nodes.iter().any(|n| n.pdl).then(|| {
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
    })
}
