//! The pieces of a GEMM node's generated calls: the `kgraph::gemm::Gemm` it runs (sizes as
//! constants, alpha and beta from the struct's scalars or as constants), its buffers' addresses
//! and lengths, and its workspace slot; and the `Blas` handle of a struct with GEMM nodes.

use proc_macro2::TokenStream;
use quote::quote;

use super::fields::{buffer_field, scalar_field};
use super::literal::typed_literal;
use crate::emit_util::elem_in_hidden_module;
use crate::graph::ir::{Binding, GemmCompute, GemmOp, GraphIr};
use crate::syntax::model::Elem;

/// `::kgraph::gemm::Gemm { .. }` of GEMM node `n`.
fn desc(ir: &GraphIr, n: usize, op: &GemmOp) -> TokenStream {
    let node = &ir.nodes[n];
    let dtype = match node.args[GemmOp::A].elem {
        Elem::F16 => quote!(F16),
        Elem::Bf16 => quote!(Bf16),
        _ => quote!(F32),
    };
    let compute = match op.compute {
        GemmCompute::F32 => quote!(F32),
        GemmCompute::Tf32 => quote!(Tf32),
    };
    let factor = |i: usize| match &node.args[i].binding {
        Binding::Scalar { scalar } => {
            let f = scalar_field(ir, *scalar);
            quote!(self.#f)
        }
        Binding::Const { value, .. } => typed_literal(value, Elem::F32),
        other => unreachable!("alpha and beta are scalars or constants, not {other:?}"),
    };
    let (alpha, beta) = (factor(GemmOp::ALPHA), factor(GemmOp::BETA));
    let size = |v: u64| {
        let v = v as usize;
        quote!(#v)
    };
    let (m, k, nn) = (size(op.m), size(op.k), size(op.n));
    let (lda, ldb, ldc) = (size(op.lda), size(op.ldb), size(op.ldc));
    let (trans_a, trans_b) = (op.trans_a, op.trans_b);
    let batch = match op.batch {
        Some(b) => {
            let (count, sa, sb, sc) = (size(b.count), size(b.stride_a), size(b.stride_b), size(b.stride_c));
            quote! {
                ::core::option::Option::Some(::kgraph::gemm::Batch {
                    count: #count, stride_a: #sa, stride_b: #sb, stride_c: #sc,
                })
            }
        }
        None => quote!(::core::option::Option::None),
    };
    quote! {
        ::kgraph::gemm::Gemm {
            dtype: ::kgraph::gemm::GemmType::#dtype,
            compute: ::kgraph::gemm::Compute::#compute,
            trans_a: #trans_a,
            trans_b: #trans_b,
            m: #m,
            n: #nn,
            k: #k,
            lda: #lda,
            ldb: #ldb,
            ldc: #ldc,
            batch: #batch,
            alpha: #alpha,
            beta: #beta,
        }
    }
}

/// The arguments of `Blas::issue_raw`/`capture_graph` after the slot: `&gemm` (bound by the
/// caller as `gemm`), the addresses of A, B and C, and their lengths.
fn buffers(ir: &GraphIr, n: usize) -> TokenStream {
    let node = &ir.nodes[n];
    let (mut addrs, mut lens) = (Vec::new(), Vec::new());
    for i in [GemmOp::A, GemmOp::B, GemmOp::C] {
        let (b, _) = node.args[i].binding.buffer_access().expect("gemm operands are buffers");
        let (f, t) = (buffer_field(ir, b), elem_in_hidden_module(ir.buffers[b].elem));
        addrs.push(quote!(::kgraph::DeviceIn::<#t>::device_addr(&self.#f)));
        let len = ir.buffers[b].len as usize;
        lens.push(quote!(#len));
    }
    quote!(&gemm, (#(#addrs),*), [#(#lens),*])
}

/// The workspace slot of GEMM node `n`: its position among the GEMM nodes.
fn slot(ir: &GraphIr, n: usize) -> usize {
    ir.gemm_nodes().iter().position(|&g| g == n).expect("a gemm node")
}

/// `__launch_node_<n>`'s body for GEMM node `n`.
pub(crate) fn launch_body(ir: &GraphIr, n: usize, op: &GemmOp) -> TokenStream {
    let (desc, call, slot) = (desc(ir, n, op), buffers(ir, n), slot(ir, n));
    quote! {
        let _ = opts;
        let gemm = #desc;
        // SAFETY: the struct's own device buffers, whose lengths hold every element the product
        // touches (proved at compile time and checked again by `issue_raw`), C apart from A and
        // B, on (or ordered with) `stream` as for a kernel launch; the slot is this node's own
        // workspace.
        unsafe { self.blas.issue_raw(#slot, #call, stream) }
    }
}

/// `__add_node_<n>`'s body for GEMM node `n`: the call captured into a child graph.
pub(crate) fn add_body(ir: &GraphIr, n: usize, op: &GemmOp) -> TokenStream {
    let (desc, call, slot) = (desc(ir, n, op), buffers(ir, n), slot(ir, n));
    quote! {
        let gemm = #desc;
        // SAFETY: as for the eager launch; the captured call's buffers and workspace are the
        // struct's, and the handle (with its workspaces) is a field dropped after the graph.
        let child = unsafe { self.blas.capture_graph(#slot, #call) }?;
        // SAFETY: a live graph of this context over the struct's buffers.
        unsafe { builder.add_child_raw(deps, child.as_raw()) }
    }
}

/// `__update_node_<n>`'s body for GEMM node `n`: captured again with the current scalars and
/// buffers, and swapped into the child-graph node.
pub(crate) fn update_body(ir: &GraphIr, n: usize, op: &GemmOp, what: &str) -> TokenStream {
    let (desc, call, slot) = (desc(ir, n, op), buffers(ir, n), slot(ir, n));
    quote! {
        let gemm = #desc;
        // SAFETY: as for `__add_node`, a child-graph node of this graph.
        let child = unsafe { self.blas.capture_graph(#slot, #call) }?;
        // SAFETY: the same GEMM over the struct's current buffers and scalars.
        unsafe { graph.set_child_graph_node(node, child.as_raw(), #what) }
    }
}

/// The struct's `blas` field, for a spec with GEMM nodes (declared after `captured`, so dropped
/// after the graph).
pub(crate) fn blas_field(ir: &GraphIr) -> Option<TokenStream> {
    (!ir.gemm_nodes().is_empty()).then(|| {
        quote! {
            /// The cuBLAS handle of the GEMM nodes, with one workspace per GEMM node.
            blas: ::kgraph::gemm::Blas,
        }
    })
}

/// `new`'s creation of the handle (`blas`), and the field initialiser; empty without GEMM nodes.
pub(crate) fn blas_init(ir: &GraphIr, graph: &str) -> (TokenStream, TokenStream) {
    let slots = ir.gemm_nodes().len();
    if slots == 0 {
        return (TokenStream::new(), TokenStream::new());
    }
    let init = quote! {
        let blas = ::kgraph::gemm::Blas::new(device, #slots)
            .map_err(|e| ::kgraph::Error::in_graph(#graph, "load cuBLAS for the gemm nodes", e))?;
    };
    (init, quote!(blas,))
}
