//! The checks a `set_<scalar>` makes before the nodes that take the scalar are rewritten in
//! the instantiated graph (`launch::update_node_fn`): that the new value keeps every extent it
//! feeds within its buffer ([`extent_checks`]) and every `requires` condition it feeds true
//! ([`requirement_checks`]); and the `requires` checks `set_launch` makes for a new launch shape
//! ([`launch_requirement_checks`]).

use proc_macro2::TokenStream;
use quote::quote;

use super::fields::{kernel_field, scalar_field};
use super::input::CodegenInput;
use super::literal::typed_literal;
use crate::graph::ir::{Binding, GraphIr};
use crate::kernel::guard::checked_extent;
use crate::syntax::model::{Extent, KernelDecl};
use crate::syntax::naming::ident_text;

/// The checks `set_<scalar s>(value)` makes before it changes anything: for every node
/// argument whose extent names a parameter bound to scalar `s`, the extent evaluated with
/// `value` (and the other scalars' current values, the constants as captured) through
/// `kgraph::__private::extent`'s checked operations in C's types must be at most the bound
/// buffer's length, else `GraphError::ScalarBreaksExtent`. The graph was checked at compile time
/// with every scalar at its default, and each setter keeps it so, which is why a replay needs
/// no check. Identical checks (the same expression and length) are made once. Empty when the
/// scalar feeds no extent.
pub(crate) fn extent_checks(cg: &CodegenInput<'_>, s: usize) -> Vec<TokenStream> {
    let ir = cg.ir;
    let graph = cg.name.to_string();
    let scalar = &ir.scalars[s].name;
    let mut seen: Vec<(String, u64)> = Vec::new();
    let mut out = Vec::new();
    for (n, node) in ir.nodes.iter().enumerate() {
        let Some(k) = node.kernel() else { continue };
        let decl = &ir.kernels[k];
        for u in node.extent_uses(decl) {
            if !node.extent_scalars(u.extent).contains(&s) {
                continue;
            }
            let value = extent_tokens(ir, n, decl, u.extent, s);
            let buf = &ir.buffers[u.buffer];
            let key = (value.to_string(), buf.len);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let len = buf.len;
            let (node_name, param, expr, buffer) = (&node.name, ident_text(&u.param.name), &u.extent.text, &buf.name);
            out.push(quote! {
                if let ::core::result::Result::Err(required) = ::kgraph::__private::extent::within(#value, #len) {
                    return ::core::result::Result::Err(::kgraph::Error::Graph(::kgraph::GraphError::ScalarBreaksExtent {
                        graph: #graph, scalar: #scalar, node: #node_name, param: #param, expr: #expr,
                        buffer: #buffer, required, len: #len,
                    }));
                }
            });
        }
    }
    out
}

/// An extent of node `n` over `kgraph::__private::extent`'s checked operations, each in the C
/// type the checked launch computes it in (`kernel::guard::checked_extent`): each name is the
/// node's argument for that parameter: `value` for scalar `s` (the setter's argument), the
/// field of another scalar, or the constant; `grid.x` and the like the node's current launch
/// shape.
fn extent_tokens(ir: &GraphIr, n: usize, decl: &KernelDecl, extent: &Extent, s: usize) -> TokenStream {
    let node = &ir.nodes[n];
    let name = |name: &syn::Ident| {
        let text = ident_text(name);
        let arg = node.arg(&text).expect("an extent names a parameter of its kernel");
        match &arg.binding {
            Binding::Scalar { scalar } if *scalar == s => quote!(value),
            Binding::Scalar { scalar } => {
                let f = scalar_field(ir, *scalar);
                quote!(self.#f)
            }
            Binding::Const { value, .. } => typed_literal(value, arg.elem),
            _ => unreachable!("an extent names integer scalar parameters only"),
        }
    };
    checked_extent(decl, extent, &name, &quote!(self.node_cfgs[#n]))
}

/// The checks `set_<scalar s>(value)` makes of the `requires` conditions it feeds: for every
/// kernel node taking scalar `s` as a parameter its kernel's conditions name, the handle's
/// `__requires` over the node's current launch shape and arguments, `value` for `s`
/// (`LaunchError::Requirement` when one is false, before anything changes).
pub(crate) fn requirement_checks(cg: &CodegenInput<'_>, s: usize) -> Vec<TokenStream> {
    let ir = cg.ir;
    let mut out = Vec::new();
    for (n, node) in ir.nodes.iter().enumerate() {
        let Some(k) = node.kernel() else { continue };
        let required = ir.kernels[k].required_scalars();
        let feeds = required
            .iter()
            .any(|p| node.arg(&ident_text(&p.name)).is_some_and(|a| a.binding == Binding::Scalar { scalar: s }));
        if !feeds {
            continue;
        }
        let (field, args) = (kernel_field(ir, k), requires_args(ir, n, Some(s)));
        out.push(quote!(self.#field.__requires(&self.node_cfgs[#n], #(#args),*)?;));
    }
    out
}

/// The `requires` checks of `set_launch(node, cfg)` before it changes anything: a `match` on
/// `node` calling its kernel's `__requires` with `cfg` and the node's current arguments.
pub(crate) fn launch_requirement_checks(cg: &CodegenInput<'_>) -> TokenStream {
    let ir = cg.ir;
    let arms = ir.nodes.iter().enumerate().filter_map(|(n, node)| {
        let k = node.kernel()?;
        if ir.kernels[k].requires.is_empty() {
            return None;
        }
        let (field, args) = (kernel_field(ir, k), requires_args(ir, n, None));
        Some(quote!(#n => self.#field.__requires(&cfg, #(#args),*)?,))
    });
    let arms: Vec<TokenStream> = arms.collect();
    if arms.is_empty() {
        return TokenStream::new();
    }
    quote! {
        match node {
            #(#arms)*
            _ => {}
        }
    }
}

/// The arguments node `n` passes its kernel's `__requires` after the configuration: each scalar
/// the conditions name, as the node binds it (`value` for scalar `setting`, the field of another
/// scalar, or the constant).
fn requires_args(ir: &GraphIr, n: usize, setting: Option<usize>) -> Vec<TokenStream> {
    let node = &ir.nodes[n];
    let k = node.kernel().expect("a kernel node");
    ir.kernels[k]
        .required_scalars()
        .into_iter()
        .map(|p| {
            let arg = node.arg(&ident_text(&p.name)).expect("a node binds every parameter of its kernel");
            match &arg.binding {
                Binding::Scalar { scalar } if Some(*scalar) == setting => quote!(value),
                Binding::Scalar { scalar } => {
                    let f = scalar_field(ir, *scalar);
                    quote!(self.#f)
                }
                Binding::Const { value, .. } => typed_literal(value, arg.elem),
                _ => unreachable!("a condition names integer scalar parameters only"),
            }
        })
        .collect()
}
