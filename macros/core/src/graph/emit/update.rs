//! The replay-time scalar updates behind `set_<scalar>`: per node that takes a scalar, a
//! private `__update_node_<n>` rewriting its kernel parameters in the instantiated graph with
//! `cuGraphExecKernelNodeSetParams`, no re-capture; and the checks a setter makes first, that
//! the new value keeps every extent it feeds within its buffer ([`extent_checks`]).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::fields::{buffer_field, scalar_field};
use super::input::CodegenInput;
use super::literal::typed_literal;
use crate::emit_util::doc_attr;
use crate::graph::ir::{Binding, GraphIr};
use crate::syntax::extent::extent_type;
use crate::syntax::model::{Elem, ExtentExpr, ExtentFn, ExtentOp};
use crate::syntax::naming::ident_text;

/// The parameter update of node `n` (only for nodes that take a scalar).
pub(crate) fn update_fn(ir: &GraphIr, n: usize) -> Option<TokenStream> {
    let node = &ir.nodes[n];
    if !node.args.iter().any(|a| matches!(a.binding, Binding::Scalar { .. })) {
        return None;
    }
    let f = format_ident!("__update_node_{}", n);
    let names: Vec<_> = (0..node.args.len()).map(|i| format_ident!("arg_{}", i)).collect();
    let values = node.args.iter().map(|a| {
        let t = a.elem.rust_ident();
        match &a.binding {
            Binding::Buffer { buffer, .. } => {
                let bf = buffer_field(ir, *buffer);
                quote!(::kgraph::cudarc::driver::sys::CUdeviceptr = ::kgraph::DeviceIn::<#t>::device_addr(&self.#bf))
            }
            // The same address `device_ptr_mut` gives the launch, taken through `&self`.
            Binding::Pinned { buffer } | Binding::PinnedMut { buffer } => {
                let bf = buffer_field(ir, *buffer);
                quote!(::kgraph::cudarc::driver::sys::CUdeviceptr = self.#bf.device_ptr().addr())
            }
            Binding::Scalar { scalar } => {
                let sf = scalar_field(ir, *scalar);
                quote!(#t = self.#sf)
            }
            Binding::Const { value, .. } => {
                let v = typed_literal(value, a.elem);
                quote!(#t = #v)
            }
        }
    });
    let count = node.args.len();
    let name = &node.name;
    let doc = format!(
        "Rewrites the kernel parameters of node `{name}` in the instantiated graph with the current scalar values."
    );
    let doc = doc_attr(&doc);
    Some(quote! {
        #doc
        fn #f(&self) -> ::kgraph::Result<()> {
            let ::core::option::Option::Some(graph) = self.captured.as_ref() else {
                return ::core::result::Result::Ok(());
            };
            #( let #names: #values; )*
            let mut params: [*mut ::core::ffi::c_void; #count] = [
                #( ::core::ptr::addr_of!(#names).cast_mut().cast::<::core::ffi::c_void>() ),*
            ];
            let node = self.graph_nodes[#n] as ::kgraph::cudarc::driver::sys::CUgraphNode;
            Self::__set_kernel_node_params(graph, node, &mut params, #name)
        }
    })
}

/// `__set_kernel_node_params`, which every [`update_fn`] ends with.
pub(crate) fn set_params_helper(cg: &CodegenInput<'_>) -> TokenStream {
    let set_params_op = format!("{}::set_<scalar>", cg.name);
    quote! {
        /// Replaces the kernel parameters of `node` in the instantiated graph.
        fn __set_kernel_node_params(
            graph: &::kgraph::Graph,
            node: ::kgraph::cudarc::driver::sys::CUgraphNode,
            params: &mut [*mut ::core::ffi::c_void],
            name: &str,
        ) -> ::kgraph::Result<()> {
            use ::kgraph::cudarc::driver::sys;
            let op = || ::std::format!("{}: update node `{}`", #set_params_op, name);
            graph.stream().context().bind_to_thread().map_err(|e| ::kgraph::Error::driver(op(), e))?;
            // SAFETY: CUDA_KERNEL_NODE_PARAMS is a plain C struct of integers and pointers, for
            // which all-zero is a valid value; it is filled by the driver below.
            let mut p: sys::CUDA_KERNEL_NODE_PARAMS = unsafe { ::core::mem::zeroed() };
            // SAFETY: `node` is a kernel node of `graph`'s CUgraph (recorded during its capture,
            // which `graph` still owns); `p` is a live out-parameter.
            unsafe { sys::cuGraphKernelNodeGetParams_v2(node, &mut p) }
                .result()
                .map_err(|e| ::kgraph::Error::driver(op(), e))?;
            p.kernelParams = params.as_mut_ptr();
            p.extra = ::core::ptr::null_mut();
            // SAFETY: `graph`'s executable graph was instantiated from the CUgraph that owns
            // `node`; `params` holds one pointer per kernel parameter, in declaration order, to
            // a live local of the parameter's type (the driver copies the values during the
            // call); function, grid, block and shared memory are the node's own.
            unsafe { sys::cuGraphExecKernelNodeSetParams_v2(graph.cu_graph_exec(), node, &p) }
                .result()
                .map_err(|e| ::kgraph::Error::driver(op(), e))
        }
    }
}

/// The checks `set_<scalar s>(value)` makes before it changes anything: for every node
/// argument whose extent names a parameter bound to scalar `s`, the extent evaluated with
/// `value` (and the other scalars' current values, the constants as captured) through
/// `kgraph::extent`'s checked operations in the extent's C type must be at most the bound
/// buffer's length, else `Error::ScalarBreaksExtent`. The graph was checked at compile time
/// with every scalar at its default, and each setter keeps it so, which is why a replay needs
/// no check. Identical checks (the same expression and length) are made once. Empty when the
/// scalar feeds no extent.
pub(crate) fn extent_checks(cg: &CodegenInput<'_>, s: usize) -> Vec<TokenStream> {
    let ir = cg.ir;
    let graph = cg.name.to_string();
    let scalar = &ir.scalars[s].name;
    let mut seen: Vec<(String, u64)> = Vec::new();
    let mut out = Vec::new();
    for node in &ir.nodes {
        let decl = &ir.kernels[node.kernel];
        for u in node.extent_uses(decl) {
            if !node.extent_scalars(u.extent).contains(&s) {
                continue;
            }
            let ty = extent_type(decl, u.extent);
            let value = extent_tokens(ir, node, &u.extent.expr, ty, s);
            let buf = &ir.buffers[u.buffer];
            let key = (value.to_string(), buf.len);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let len = buf.len;
            let (node_name, param, expr, buffer) = (&node.name, ident_text(&u.param.name), &u.extent.text, &buf.name);
            out.push(quote! {
                if let ::core::result::Result::Err(required) = ::kgraph::extent::within(#value, #len) {
                    return ::core::result::Result::Err(::kgraph::Error::ScalarBreaksExtent {
                        graph: #graph, scalar: #scalar, node: #node_name, param: #param, expr: #expr,
                        buffer: #buffer, required, len: #len,
                    });
                }
            });
        }
    }
    out
}

/// An extent of `node` over `kgraph::extent`'s checked operations in `ty`: each name is the
/// node's argument for that parameter: `value` for scalar `s` (the setter's argument), the
/// field of another scalar, or the constant.
fn extent_tokens(ir: &GraphIr, node: &crate::graph::ir::Node, expr: &ExtentExpr, ty: Elem, s: usize) -> TokenStream {
    let t = ty.rust_ident();
    match expr {
        ExtentExpr::Int { value, .. } => {
            let lit = proc_macro2::Literal::u64_unsuffixed(*value);
            quote!(::kgraph::extent::lit::<#t>(#lit))
        }
        ExtentExpr::Name(name) => {
            let text = ident_text(name);
            let arg = node.arg(&text).expect("an extent names a parameter of its kernel");
            let v = match &arg.binding {
                Binding::Scalar { scalar } if *scalar == s => quote!(value),
                Binding::Scalar { scalar } => {
                    let f = scalar_field(ir, *scalar);
                    quote!(self.#f)
                }
                Binding::Const { value, .. } => typed_literal(value, arg.elem),
                _ => unreachable!("an extent names integer scalar parameters only"),
            };
            quote!(::kgraph::extent::scalar::<#t, _>(#text, #v))
        }
        ExtentExpr::Binary { op, lhs, rhs } => {
            let f = match op {
                ExtentOp::Add => quote!(add),
                ExtentOp::Sub => quote!(sub),
                ExtentOp::Mul => quote!(mul),
                ExtentOp::Div => quote!(div),
                ExtentOp::Rem => quote!(rem),
            };
            let (l, r) = (extent_tokens(ir, node, lhs, ty, s), extent_tokens(ir, node, rhs, ty, s));
            quote!(::kgraph::extent::#f(#l, #r))
        }
        ExtentExpr::Call { func, a, b } => {
            let f = match func {
                ExtentFn::Min => quote!(min),
                ExtentFn::Max => quote!(max),
            };
            let (a, b) = (extent_tokens(ir, node, a, ty, s), extent_tokens(ir, node, b, ty, s));
            quote!(::kgraph::extent::#f(#a, #b))
        }
    }
}
