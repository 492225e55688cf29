//! Token helpers shared by the kernel and the graph emitters.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::quote;
use syn::{Attribute, Ident, Visibility};

use crate::syntax::model::{Axis, Elem, LaunchDim};

/// `#[doc]` attributes, one per line with a leading space (as `///` comments would give); an
/// empty line stays empty.
pub(crate) fn doc_lines<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) -> TokenStream {
    let lines = lines.into_iter().map(|l| match l.as_ref() {
        "" => String::new(),
        l => format!(" {l}"),
    });
    quote!(#(#[doc = #lines])*)
}

/// [`doc_lines`] of a text (trailing whitespace dropped).
pub(crate) fn doc_attr(text: &str) -> TokenStream {
    doc_lines(text.trim_end().lines())
}

/// `<cfg>.grid_dim.0` ... `<cfg>.block_dim.2`: one axis of a `LaunchConfig`'s grid or block, for
/// extents that name the launch's shape (`grid.x`, `block.z`).
pub(crate) fn launch_dim_tokens(cfg: TokenStream, dim: LaunchDim, axis: Axis) -> TokenStream {
    let field = match dim {
        LaunchDim::Grid => quote!(grid_dim),
        LaunchDim::Block => quote!(block_dim),
    };
    let index = syn::Index::from(axis.index());
    quote!(#cfg.#field.#index)
}

/// An identifier with no span of its own (generated, not written by the user).
pub(crate) fn ident(s: &str) -> Ident {
    Ident::new(s, Span::call_site())
}

/// `items` (which define `name`) inside a module `hidden` of their own, re-exported as `vis`,
/// each gated by `cfgs`. The generated structs' fields and private helpers are then private to
/// the generated code, not to the module the declaration is in, where safe code could point a
/// handle at another kernel or swap a buffer under a built graph. The module sees the
/// declaring module's names through a glob import; a path the user wrote starting with `super`
/// is rebased for it by [`path_from_hidden_module`].
pub(crate) fn in_hidden_module(
    hidden: &Ident,
    name: &Ident,
    vis: &Visibility,
    cfgs: &[&Attribute],
    items: TokenStream,
) -> TokenStream {
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_snake_case)]
        mod #hidden {
            #[allow(unused_imports)]
            use super::*;

            #items
        }
        // An unused item is reported as never constructed, not as this import.
        #(#cfgs)*
        #[allow(unused_imports)]
        #[doc(inline)]
        #vis use #hidden::#name;
    }
}

/// The Rust type of `elem` as code in a hidden module ([`in_hidden_module`]) names it.
pub(crate) fn elem_in_hidden_module(elem: Elem) -> TokenStream {
    path_from_hidden_module(elem.rust_tokens())
}

/// A path the user wrote for the declaring module, as code in its hidden module
/// ([`in_hidden_module`]) must spell it: `super::x` becomes `super::super::x`; any other path
/// (`crate::`, `::`, `self::` and bare names, which the glob import resolves) is unchanged.
pub(crate) fn path_from_hidden_module(path: TokenStream) -> TokenStream {
    match path.clone().into_iter().next() {
        Some(TokenTree::Ident(first)) if first == "super" => quote!(super::#path),
        _ => path,
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::emit_util::path_from_hidden_module;

    #[test]
    fn only_paths_starting_with_super_are_rebased() {
        let rebased = |p: proc_macro2::TokenStream| path_from_hidden_module(p).to_string();
        assert_eq!(rebased(quote!(super::kernels)), "super :: super :: kernels");
        assert_eq!(rebased(quote!(super::super::k)), "super :: super :: super :: k");
        for kept in [quote!(crate::k), quote!(::m::k), quote!(self::k), quote!(kernels), quote!(superb::k)] {
            assert_eq!(rebased(kept.clone()), kept.to_string());
        }
    }
}
