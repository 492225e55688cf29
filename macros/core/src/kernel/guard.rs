//! The checks a checked `launch` runs before it launches (a declaration with extents under
//! `unsafe(extents)`), as inline code over `kgraph::__private::extent`: the launch's thread count bounded
//! (at most 2^31, so `int` thread indices cannot overflow), each extent evaluated from the
//! scalar arguments, each pointer argument's length compared with its extent, and each written
//! argument's bytes compared with every other pointer argument's. A few integer operations per
//! argument; no allocation, no formatting unless a launch is refused.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Ident, LitInt};

use crate::emit_util::{elem_in_hidden_module, launch_dim_tokens};
use crate::syntax::extent::{extent_type, operation_type};
use crate::syntax::model::{Elem, Extent, ExtentExpr, ExtentFn, ExtentOp, KernelDecl, Param, ParamKind};
use crate::syntax::naming::ident_text;

/// The generated checks, in two parts around the lines that turn the pointer arguments into
/// device addresses (`let x = device_addr(x);`).
pub(crate) struct Guard {
    /// Bounds the thread count, evaluates every extent and checks every argument's length
    /// (before the addresses).
    pub lengths: TokenStream,
    /// Checks that no written argument overlaps another (after the addresses).
    pub overlaps: TokenStream,
}

/// The checks of a checked launch of `decl`; empty for a declaration without extents.
pub(crate) fn guard(decl: &KernelDecl) -> Guard {
    let pointers: Vec<&Param> = decl.params.iter().filter(|p| p.extent.is_some()).collect();
    let extents = pointers.iter().map(|p| extent_value(decl, p));
    let lengths = pointers.iter().map(|p| length_check(p));
    let overlaps = overlap_checks(&pointers);
    let shared = decl.shared.as_ref().map(|s| shared_check(decl, s));
    let lengths = quote! {
        ::kgraph::__private::extent::check_threads(Self::NAME, &cfg)?;
        #shared
        #(#extents)*
        #(#lengths)*
    };
    Guard { lengths, overlaps: quote!(#(#overlaps)*) }
}

/// The local holding the extent of `param` (hygienic: no parameter name can clash with it).
fn extent_local(param: &Param) -> Ident {
    Ident::new(&format!("{}_extent", ident_text(&param.name)), Span::mixed_site())
}

/// `let x_extent: u64 = ::kgraph::__private::extent::extent(NAME, "x", "n", <n, checked>)?;`
fn extent_value(decl: &KernelDecl, param: &Param) -> TokenStream {
    let extent = param.extent.as_ref().expect("only parameters with extents");
    let value = checked_value(decl, extent);
    let local = extent_local(param);
    let (name, text) = (ident_text(&param.name), &extent.text);
    quote! {
        let #local: u64 = ::kgraph::__private::extent::extent(Self::NAME, #name, #text, #value)?;
    }
}

/// `::kgraph::__private::extent::check_shared(NAME, "block.x * 4", <bytes, checked>, cfg.shared_mem_bytes)?;`
fn shared_check(decl: &KernelDecl, shared: &Extent) -> TokenStream {
    let value = checked_value(decl, shared);
    let local = Ident::new("shared_bytes", Span::mixed_site());
    let text = &shared.text;
    quote! {
        let #local: u64 = ::kgraph::__private::extent::extent(Self::NAME, "shared", #text, #value)?;
        ::kgraph::__private::extent::check_shared(Self::NAME, #text, #local, cfg.shared_mem_bytes)?;
    }
}

/// An extent (or `shared`) over `kgraph::__private::extent`'s checked operations, each
/// operation in the type C computes it in ([`operation_type`]): `(end - start) + offset` with
/// `u32` `end`, `start` and an `i64` `offset` subtracts in `u32`, so an `end < start` that C
/// wraps to about 2^32 is refused, not computed as a small `i64`. An extent of literals only is
/// computed in `i64` throughout ([`extent_type`]).
fn checked_value(decl: &KernelDecl, extent: &Extent) -> TokenStream {
    let name = |name: &Ident| quote!(#name);
    checked_extent(decl, extent, &name, &quote!(cfg))
}

/// [`checked_value`] with the values of the names from elsewhere: `name` gives the tokens of a
/// scalar parameter's value, `cfg` the `LaunchConfig` the launch dimensions are read from (a
/// graph struct's `set_<scalar>` checks a node's extents so, with its scalars' fields and the
/// node's launch shape). The same operations in the same C types as the checked launch.
pub(crate) fn checked_extent(
    decl: &KernelDecl,
    extent: &Extent,
    name: &dyn Fn(&Ident) -> TokenStream,
    cfg: &TokenStream,
) -> TokenStream {
    let types = Types { decl, literals_only: extent.expr.names().is_empty() && !extent.expr.uses_launch(), name, cfg };
    let ty = if types.literals_only { extent_type(decl, extent) } else { operation_type(decl, &extent.expr) };
    expr_tokens(&types, &extent.expr, ty)
}

/// What the type of each operation of an extent is read from, and its names' values.
struct Types<'d> {
    decl: &'d KernelDecl,
    /// The extent names no scalar and no launch dimension: every operation is `i64`.
    literals_only: bool,
    /// A scalar parameter's value.
    name: &'d dyn Fn(&Ident) -> TokenStream,
    /// The launch's `LaunchConfig`.
    cfg: &'d TokenStream,
}

impl Types<'_> {
    /// The type operation `expr` is computed in.
    fn of(&self, expr: &ExtentExpr) -> Elem {
        if self.literals_only {
            Elem::I64
        } else {
            operation_type(self.decl, expr)
        }
    }
}

/// The expression over `kgraph::__private::extent`'s checked operations, its value in `ty`:
/// a literal, scalar or launch dimension is taken in `ty` directly (a scalar that does not
/// convert, a negative one into an unsigned type, is a fault, as is a launch dimension past
/// `ty`); an operation is computed in its own type and its value converted to `ty` when that is
/// wider (a negative value into an unsigned type is a fault where C would wrap it). `ty` is never
/// narrower than the expression's own type.
fn expr_tokens(types: &Types<'_>, expr: &ExtentExpr, ty: Elem) -> TokenStream {
    let t = ty.rust_ident();
    match expr {
        ExtentExpr::Int { value, span } => {
            let lit = LitInt::new(&format!("{value}{}", ty.rust_name()), *span);
            quote!(::kgraph::__private::extent::lit(#lit))
        }
        ExtentExpr::Name(name) => {
            let (text, value) = (ident_text(name), (types.name)(name));
            quote!(::kgraph::__private::extent::scalar::<#t, _>(#text, #value))
        }
        ExtentExpr::Launch { dim, axis, .. } => {
            let text = dim.text(*axis);
            let value = launch_dim_tokens(types.cfg.clone(), *dim, *axis);
            quote!(::kgraph::__private::extent::scalar::<#t, _>(#text, #value))
        }
        ExtentExpr::Binary { op, lhs, rhs } => {
            let f = match op {
                ExtentOp::Add => quote!(add),
                ExtentOp::Sub => quote!(sub),
                ExtentOp::Mul => quote!(mul),
                ExtentOp::Div => quote!(div),
                ExtentOp::Rem => quote!(rem),
            };
            let own = types.of(expr);
            let (l, r) = (expr_tokens(types, lhs, own), expr_tokens(types, rhs, own));
            converted(quote!(::kgraph::__private::extent::#f(#l, #r)), own, ty)
        }
        ExtentExpr::Call { func, a, b } => {
            let f = match func {
                ExtentFn::Min => quote!(min),
                ExtentFn::Max => quote!(max),
            };
            let own = types.of(expr);
            let (a, b) = (expr_tokens(types, a, own), expr_tokens(types, b, own));
            converted(quote!(::kgraph::__private::extent::#f(#a, #b)), own, ty)
        }
    }
}

/// `value`, computed in `from`, as a value of `to` (`from` itself when they are the same).
fn converted(value: TokenStream, from: Elem, to: Elem) -> TokenStream {
    if from == to {
        return value;
    }
    let (from, to) = (from.rust_ident(), to.rust_ident());
    quote!(::kgraph::__private::extent::convert::<#to, #from>(#value))
}

/// `::kgraph::__private::extent::check_len(NAME, "x", x_extent, <length of x>)?;`
fn length_check(param: &Param) -> TokenStream {
    let (n, local, name) = (&param.name, extent_local(param), ident_text(&param.name));
    let t = elem_in_hidden_module(param.kind.elem());
    if param.nullable {
        // `None` (a null pointer) has no length to check: the kernel accepts NULL there.
        return quote! {
            if let ::core::option::Option::Some(b) = &#n {
                ::kgraph::__private::extent::check_len(Self::NAME, #name, #local, ::kgraph::DeviceIn::<#t>::elem_len(&**b))?;
            }
        };
    }
    let len = match param.kind {
        ParamKind::Slice { mutable: false, .. } => quote!(::kgraph::DeviceIn::<#t>::elem_len(#n)),
        ParamKind::Slice { mutable: true, .. } => quote!(::kgraph::DeviceIn::<#t>::elem_len(&*#n)),
        ParamKind::Pinned(_) | ParamKind::PinnedMut(_) => quote!(#n.len()),
        ParamKind::Scalar(_) => unreachable!("scalars have no extent"),
    };
    quote! {
        ::kgraph::__private::extent::check_len(Self::NAME, #name, #local, #len)?;
    }
}

/// One `check_disjoint` per pair of a written argument and another pointer argument (each
/// pair once), over the device addresses and extents.
fn overlap_checks(pointers: &[&Param]) -> Vec<TokenStream> {
    let mut checks = Vec::new();
    for (i, written) in pointers.iter().enumerate() {
        if !written.kind.is_written() {
            continue;
        }
        for (j, other) in pointers.iter().enumerate() {
            // A pair of written arguments is checked once, from the first of the two.
            if i == j || (other.kind.is_written() && j < i) {
                continue;
            }
            checks.push(disjoint(written, other));
        }
    }
    checks
}

/// `::kgraph::__private::extent::check_disjoint(NAME, "y", <bytes of y>, "x", <bytes of x>)?;`
fn disjoint(written: &Param, other: &Param) -> TokenStream {
    let bytes = |p: &Param| {
        let (n, local, t) = (&p.name, extent_local(p), elem_in_hidden_module(p.kind.elem()));
        if p.nullable {
            // A null pointer (`None`, address 0) covers no bytes.
            quote!(::kgraph::__private::extent::ByteRange::of::<#t>(#n, if #n == 0 { 0 } else { #local }))
        } else {
            quote!(::kgraph::__private::extent::ByteRange::of::<#t>(#n, #local))
        }
    };
    let (w_name, o_name) = (ident_text(&written.name), ident_text(&other.name));
    let (w, o) = (bytes(written), bytes(other));
    quote! {
        ::kgraph::__private::extent::check_disjoint(Self::NAME, #w_name, #w, #o_name, #o)?;
    }
}
