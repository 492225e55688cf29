//! Read-only accessors of the buffers, and each scalar's getter and `set_<scalar>` (which
//! refuses a value that breaks an extent the scalar feeds, then updates the captured graph in
//! place through the nodes' `__update_node_<n>`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::fields::{buffer_field, scalar_field, storage_type};
use super::input::CodegenInput;
use super::update::extent_checks;
use crate::emit_util::{doc_attr, ident};
use crate::graph::ir::{Binding, GraphIr};

/// `" — <doc>"` for an item's spec `doc`, or nothing.
fn doc_suffix(doc: &Option<String>) -> String {
    doc.as_ref().map(|d| format!(" — {d}")).unwrap_or_default()
}

/// Every buffer's accessor, then every scalar's getter and setter.
pub(crate) fn accessors(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let mut out = TokenStream::new();
    for b in 0..ir.buffers.len() {
        out.extend(buffer_accessor(ir, b));
    }
    for s in 0..ir.scalars.len() {
        out.extend(scalar_accessors(cg, s));
    }
    out
}

fn buffer_accessor(ir: &GraphIr, b: usize) -> TokenStream {
    let buf = &ir.buffers[b];
    let f = buffer_field(ir, b);
    let m = ident(&buf.name);
    let ty = storage_type(buf.role, &buf.elem.rust_ident());
    let doc = format!(
        "Buffer `{}`: {} {} x {} (`{}`){}. Read-only access: the captured graph holds its address, so it cannot be replaced.",
        buf.name,
        buf.role.name(),
        buf.elem,
        buf.len,
        buf.len_src,
        doc_suffix(&buf.doc)
    );
    let doc = doc_attr(&doc);
    quote!(#doc pub fn #m(&self) -> &#ty { &self.#f })
}

fn scalar_accessors(cg: &CodegenInput<'_>, s: usize) -> TokenStream {
    let ir = cg.ir;
    let sc = &ir.scalars[s];
    let f = scalar_field(ir, s);
    let m = ident(&sc.name);
    let t = sc.elem.rust_ident();
    let doc = format!("The current value of scalar `{}` ({}){}.", sc.name, sc.elem, doc_suffix(&sc.doc));
    let doc = doc_attr(&doc);
    let getter = quote!(#doc pub fn #m(&self) -> #t { self.#f });
    let set = format_ident!("{}", sc.setter());
    let users: Vec<usize> = (0..ir.nodes.len())
        .filter(|&n| ir.nodes[n].args.iter().any(|a| a.binding == Binding::Scalar { scalar: s }))
        .collect();
    let update = users.iter().map(|&n| format_ident!("__update_node_{}", n));
    let used_by: Vec<String> = users.iter().map(|&n| format!("`{}`", ir.nodes[n].name)).collect();
    let checks = extent_checks(cg, s);
    let refuses = if checks.is_empty() {
        String::new()
    } else {
        " It feeds kernel extents, so it first checks that `value` keeps each of them (evaluated as the kernel's checked launch would) within its buffer, and refuses a value that does not with `kgraph::Error::ScalarBreaksExtent`, changing nothing: the captured graph keeps running with the old value.".to_string()
    };
    let doc = format!(
        "Sets scalar `{}` ({}). Takes effect at the next launch: eager runs pass it directly, and when a graph is captured its kernel nodes that take it ({}) are updated in place with `cuGraphExecKernelNodeSetParams` — no re-capture.{refuses}",
        sc.name,
        sc.elem,
        used_by.join(", ")
    );
    let doc = doc_attr(&doc);
    quote! {
        #getter
        #doc
        pub fn #set(&mut self, value: #t) -> ::kgraph::Result<()> {
            #( #checks )*
            self.#f = value;
            #( self.#update()?; )*
            ::core::result::Result::Ok(())
        }
    }
}
