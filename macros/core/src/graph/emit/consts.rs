//! The generated struct's associated constants: the spec path, dims, buffer lengths, the node
//! list with its dependency and PDL edges, and the diagrams.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::arena::plan_consts;
use super::input::CodegenInput;
use crate::emit_util::{doc_attr, ident};

/// `(from, to)` index pairs as a slice literal's elements.
fn pairs(pairs: impl IntoIterator<Item = (usize, usize)>) -> Vec<TokenStream> {
    pairs
        .into_iter()
        .map(|(f, t)| {
            let (f, t) = (Literal::usize_unsuffixed(f), Literal::usize_unsuffixed(t));
            quote!((#f, #t))
        })
        .collect()
}

/// Every associated constant, in the order of the docs.
pub(crate) fn assoc_consts(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let spec = &ir.spec_path;
    let dim_consts = ir.dims.iter().map(|d| {
        let c = ident(&d.const_name());
        let v = Literal::usize_unsuffixed(d.value as usize);
        let doc = doc_attr(&format!("Dim `{}` = {} (from the spec).", d.name, d.value));
        quote!(#doc pub const #c: usize = #v;)
    });
    let len_consts = ir.buffers.iter().map(|b| {
        let c = format_ident!("{}", b.len_const());
        let v = Literal::usize_unsuffixed(b.len as usize);
        let doc = doc_attr(&format!("Length of buffer `{}` in elements: `{}` = {}.", b.name, b.len_src, b.len));
        quote!(#doc pub const #c: usize = #v;)
    });
    let node_names: Vec<&str> = ir.nodes.iter().map(|n| n.name.as_str()).collect();
    let edge_pairs = pairs(cg.edges.iter().map(|e| (e.from, e.to)));
    let node_pdl: Vec<bool> = ir.nodes.iter().map(|n| n.pdl).collect();
    let pdl_edge_pairs = pairs(cg.programmatic.iter().copied());
    let (dot, mermaid) = (cg.dot, cg.mermaid);
    let plan = plan_consts(cg);
    quote! {
        /// The spec file this type was generated from.
        pub const SPEC: &'static str = #spec;
        #( #dim_consts )*
        #( #len_consts )*
        #plan
        /// Node names, in file order (= eager order); indices used by `EDGES`.
        pub const NODES: &'static [&'static str] = &[#(#node_names),*];
        /// Dependency edges `(from, to)` between nodes, derived from their reads and writes
        /// and transitively reduced: exactly the edges of the graph [`Self::capture`] builds.
        pub const EDGES: &'static [(usize, usize)] = &[#(#edge_pairs),*];
        /// Per node (indexed like `NODES`): launched with programmatic dependent launch (the
        /// spec's `pdl`). Such a kernel must execute `griddepcontrol.wait` before touching
        /// any buffer.
        pub const NODE_PDL: &'static [bool] = &[#(#node_pdl),*];
        /// The edges of `EDGES` that [`Self::capture`] makes programmatic (while PDL is
        /// enabled): every edge between two kernel nodes of one graph level into a PDL node,
        /// joins and fan-outs included. Edges from or into memset, memcpy and conditional
        /// nodes are full dependencies.
        pub const PDL_EDGES: &'static [(usize, usize)] = &[#(#pdl_edge_pairs),*];
        /// The dataflow as Graphviz DOT.
        pub const DOT: &'static str = #dot;
        /// The dataflow as a Mermaid flowchart.
        pub const MERMAID: &'static str = #mermaid;
    }
}
