//! The signatures of a kernel handle's methods (`load`, `new`, the launchers, `__issue`), from one
//! description of its parameters, so that the handle and its stub cannot drift apart.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use crate::emit_util::elem_in_hidden_module;
use crate::syntax::model::{Elem, ParamKind};

/// The `launch` parameter type for a declared kind, as code in the handle's hidden module
/// names it (`in_hidden_module`), or as the declaring module does (a stub, emitted there).
/// A `nullable` pointer (`Option<&[T; n]>`) is an `Option` of a trait object, so that `None`
/// needs no type annotation.
fn launch_param_type(kind: ParamKind, nullable: bool, in_hidden_module: bool) -> TokenStream {
    let elem = kind.elem();
    let t = if in_hidden_module { elem_in_hidden_module(elem) } else { elem.rust_tokens() };
    match kind {
        ParamKind::Slice { mutable: false, .. } if nullable => {
            quote!(::core::option::Option<&dyn ::kgraph::DeviceIn<#t>>)
        }
        ParamKind::Slice { mutable: true, .. } if nullable => {
            quote!(::core::option::Option<&mut dyn ::kgraph::DeviceOut<#t>>)
        }
        ParamKind::Slice { mutable: false, .. } => quote!(&impl ::kgraph::DeviceIn<#t>),
        ParamKind::Slice { mutable: true, .. } => quote!(&mut impl ::kgraph::DeviceOut<#t>),
        // A Rust `bool` is already 0 or 1; `kgraph::Bool` is the element type of `bool` memory.
        ParamKind::Scalar(Elem::Bool) => quote!(bool),
        ParamKind::Scalar(_) => quote!(#t),
        ParamKind::Pinned(_) => quote!(::kgraph::PinnedPtr<#t>),
        ParamKind::PinnedMut(_) => quote!(::kgraph::PinnedMutPtr<#t>),
    }
}

/// The signatures of a handle's methods, from one description of the kernel's parameters:
/// the handle and its stub both use them, so they cannot drift apart.
pub(super) struct HandleSignatures {
    /// `name: Type` per kernel parameter, in order.
    params: Vec<TokenStream>,
}

impl HandleSignatures {
    /// From each parameter's name and kind; a parameter whose type did not parse (`None`)
    /// takes `impl Sized`, so a stub keeps the arity. `in_hidden_module`: for a handle (in its
    /// hidden module), not a stub (in the declaring module).
    pub(super) fn new<'p>(
        params: impl IntoIterator<Item = (&'p Ident, Option<ParamKind>, bool)>,
        in_hidden_module: bool,
    ) -> Self {
        let params = params
            .into_iter()
            .map(|(name, kind, nullable)| {
                let ty = kind.map_or_else(
                    || quote!(impl ::core::marker::Sized),
                    |kind| launch_param_type(kind, nullable, in_hidden_module),
                );
                quote!(#name: #ty)
            })
            .collect();
        HandleSignatures { params }
    }

    pub(super) fn load() -> TokenStream {
        quote!(load(cache: &mut ::kgraph::expert::ModuleCache) -> ::kgraph::Result<Self>)
    }

    pub(super) fn new_fn() -> TokenStream {
        quote!(new(device: &::kgraph::Device) -> ::kgraph::Result<Self>)
    }

    pub(super) fn launch(&self) -> TokenStream {
        self.launcher("launch", false)
    }

    pub(super) fn launch_ordered(&self) -> TokenStream {
        self.launcher("__launch_ordered", true)
    }

    pub(super) fn launch_with(&self) -> TokenStream {
        self.launcher("launch_with", true)
    }

    /// `__issue(&self, __kg_target, cfg, opts, params...) -> Result<Issued>`.
    pub(super) fn issue(&self) -> TokenStream {
        let params = &self.params;
        quote! {
            __issue(
                &self,
                __kg_target: ::kgraph::expert::Issue<'_, '_>,
                cfg: ::kgraph::LaunchConfig,
                opts: ::kgraph::LaunchOptions,
                #(#params),*
            ) -> ::kgraph::Result<::kgraph::expert::Issued>
        }
    }

    /// `name(&self, stream, cfg, [opts,] params...) -> Result<()>`.
    fn launcher(&self, name: &str, with_opts: bool) -> TokenStream {
        let name = syn::Ident::new(name, proc_macro2::Span::call_site());
        let params = &self.params;
        let opts = with_opts.then(|| quote!(opts: ::kgraph::LaunchOptions,));
        quote! {
            #name(
                &self,
                stream: &::kgraph::Stream,
                cfg: ::kgraph::LaunchConfig,
                #opts
                #(#params),*
            ) -> ::kgraph::Result<()>
        }
    }
}
