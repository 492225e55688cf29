//! The launch-time requirements of a checked launch, as code over
//! `kgraph::__private::requires`: the handle's `__requires(&cfg, <scalars>)`, which evaluates
//! every `requires` condition from the launch configuration and the scalars it names (the
//! launch calls it, and so do the graph structs' `set_<scalar>` and `set_launch` before they
//! change anything), and one `check_align` per `align(param = bytes)` over the argument's device
//! address. Compares and integer operations; formatting only in a refusal.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use crate::emit_util::{elem_in_hidden_module, launch_dim_tokens};
use crate::syntax::model::{Cond, ExtentExpr, ExtentFn, ExtentOp, KernelDecl, Requirement};
use crate::syntax::naming::ident_text;

/// `#[doc(hidden)] pub fn __requires(&self, cfg, <scalars>) -> Result<()>`; nothing for a
/// declaration without `requires`.
pub(crate) fn requires_fn(decl: &KernelDecl) -> TokenStream {
    if decl.requires.is_empty() {
        return TokenStream::new();
    }
    let params = decl.required_scalars().into_iter().map(|p| {
        let (n, t) = (&p.name, elem_in_hidden_module(p.kind.elem()));
        quote!(#n: #t)
    });
    let checks = decl.requires.iter().map(|r| requirement_check(decl, r));
    quote! {
        /// Refuses a launch configuration and scalars for which a condition of the
        /// declaration's `requires(...)` is false (`kgraph::LaunchError::Requirement`): the
        /// launch calls it, and the graph structs' setters before they change anything.
        #[doc(hidden)]
        #[inline]
        #[allow(clippy::too_many_arguments)]
        pub fn __requires(&self, cfg: &::kgraph::LaunchConfig, #(#params),*) -> ::kgraph::Result<()> {
            #(#checks)*
            ::core::result::Result::Ok(())
        }
    }
}

/// `self.__requires(&cfg, <scalars>)?;` in the launch; nothing without `requires`.
pub(crate) fn requires_call(decl: &KernelDecl) -> TokenStream {
    if decl.requires.is_empty() {
        return TokenStream::new();
    }
    let names: Vec<&Ident> = decl.required_scalars().into_iter().map(|p| &p.name).collect();
    quote!(self.__requires(&cfg, #(#names),*)?;)
}

/// `check_align(NAME, "x", x, 16)?;` per `align`, after the arguments became device addresses
/// (`x` is then the address).
pub(crate) fn align_checks(decl: &KernelDecl) -> TokenStream {
    decl.align
        .iter()
        .map(|a| {
            let (n, name, bytes) = (&a.param, ident_text(&a.param), a.bytes);
            quote!(::kgraph::__private::requires::check_align(Self::NAME, #name, #n, #bytes)?;)
        })
        .collect()
}

/// `if !<cond> { return Err(refused(NAME, "text", &[("n", i128::from(n)), ...])); }`
fn requirement_check(decl: &KernelDecl, requirement: &Requirement) -> TokenStream {
    let holds = cond_tokens(&requirement.cond);
    let text = &requirement.text;
    let values = requirement.cond.value_names().into_iter().map(|name| {
        // The rules admit only parameters and `grid.x` ... `block.z`.
        let value = match decl.params.iter().find(|p| ident_text(&p.name) == name) {
            Some(p) => {
                let ident = &p.name;
                quote!(::core::convert::From::from(#ident))
            }
            None => launch_value(&name),
        };
        quote!((#name, #value))
    });
    quote! {
        if !(#holds) {
            return ::core::result::Result::Err(::kgraph::__private::requires::refused(Self::NAME, #text, &[#(#values),*]));
        }
    }
}

/// `i128::from(cfg.block_dim.0)` for `"block.x"` and the like.
fn launch_value(text: &str) -> TokenStream {
    use crate::syntax::model::{Axis, LaunchDim};
    let dims = [LaunchDim::Grid, LaunchDim::Block];
    let axes = [Axis::X, Axis::Y, Axis::Z];
    let (dim, axis) = dims
        .iter()
        .flat_map(|d| axes.iter().map(move |a| (*d, *a)))
        .find(|(d, a)| d.text(*a) == text)
        .expect("a launch dimension's text");
    let value = launch_dim_tokens(quote!(cfg), dim, axis);
    quote!(::core::convert::From::from(#value))
}

/// The condition as a `bool` expression over `kgraph::__private::requires`.
fn cond_tokens(cond: &Cond) -> TokenStream {
    match cond {
        Cond::Compare { op, lhs, rhs } => {
            let f = Ident::new(op.runtime_fn(), proc_macro2::Span::call_site());
            let (l, r) = (expr_tokens(lhs), expr_tokens(rhs));
            quote!(::kgraph::__private::requires::#f(#l, #r))
        }
        Cond::And(a, b) => {
            let (a, b) = (cond_tokens(a), cond_tokens(b));
            quote!((#a && #b))
        }
        Cond::Or(a, b) => {
            let (a, b) = (cond_tokens(a), cond_tokens(b));
            quote!((#a || #b))
        }
    }
}

/// An operand over `kgraph::__private::requires`'s checked `i128` operations.
fn expr_tokens(expr: &ExtentExpr) -> TokenStream {
    match expr {
        ExtentExpr::Int { value, .. } => {
            let lit = proc_macro2::Literal::i128_suffixed(i128::from(*value));
            quote!(::kgraph::__private::requires::lit(#lit))
        }
        ExtentExpr::Name(name) => quote!(::kgraph::__private::requires::int(#name)),
        ExtentExpr::Launch { dim, axis, .. } => {
            let value = launch_dim_tokens(quote!(cfg), *dim, *axis);
            quote!(::kgraph::__private::requires::int(#value))
        }
        ExtentExpr::Binary { op, lhs, rhs } => {
            let f = match op {
                ExtentOp::Add => quote!(add),
                ExtentOp::Sub => quote!(sub),
                ExtentOp::Mul => quote!(mul),
                ExtentOp::Div => quote!(div),
                ExtentOp::Rem => quote!(rem),
            };
            let (l, r) = (expr_tokens(lhs), expr_tokens(rhs));
            quote!(::kgraph::__private::requires::#f(#l, #r))
        }
        ExtentExpr::Call { func, a, b } => {
            let f = match func {
                ExtentFn::Min => quote!(min),
                ExtentFn::Max => quote!(max),
            };
            let (a, b) = (expr_tokens(a), expr_tokens(b));
            quote!(::kgraph::__private::requires::#f(#a, #b))
        }
    }
}
