//! The run-time checks a generated launch makes besides the extents ([`super::guard`]): every
//! device-memory argument is owned by the launch stream (`check_same_stream`), every mapped
//! pinned argument belongs to its context (`check_same_context`), and a PDL launch is refused
//! for a kernel whose wait on its grid dependency is not proven (`check_pdl`). A few pointer
//! compares per argument.

use proc_macro2::TokenStream;
use quote::quote;

use super::abi::abi;
use crate::emit_util::elem_in_hidden_module;
use crate::syntax::model::{KernelDecl, ParamKind};

/// One `check_same_stream` per slice argument and one `check_same_context` per pinned
/// argument, in parameter order (before the arguments are turned into addresses).
pub(crate) fn stream_checks(decl: &KernelDecl) -> TokenStream {
    decl.params
        .iter()
        .filter_map(|p| {
            let (n, name) = (&p.name, p.name.to_string());
            match p.kind {
                ParamKind::Slice { elem, .. } if p.nullable => {
                    let t = elem_in_hidden_module(elem);
                    Some(quote! {
                        if let ::core::option::Option::Some(b) = &#n {
                            ::kgraph::__private::check_same_stream(Self::NAME, #name, stream, ::kgraph::DeviceIn::<#t>::stream(&**b))?;
                        }
                    })
                }
                ParamKind::Slice { elem, mutable } => {
                    let t = elem_in_hidden_module(elem);
                    let arg = if mutable { quote!(&*#n) } else { quote!(#n) };
                    Some(quote! {
                        ::kgraph::__private::check_same_stream(Self::NAME, #name, stream, ::kgraph::DeviceIn::<#t>::stream(#arg))?;
                    })
                }
                ParamKind::Pinned(_) | ParamKind::PinnedMut(_) => Some(quote! {
                    ::kgraph::__private::check_same_context(Self::NAME, #name, stream, #n.context())?;
                }),
                ParamKind::Scalar(_) => None,
            }
        })
        .collect()
}

/// Refuses `opts` asking for PDL unless `PDL_WAITS`.
pub(crate) fn pdl_check() -> TokenStream {
    quote!(::kgraph::__private::check_pdl(Self::NAME, opts, Self::PDL_WAITS)?;)
}

/// Raises the kernel's dynamic shared memory limit when the launch asks for more than it
/// allows (an atomic load when it does not).
pub(crate) fn shared_opt_in() -> TokenStream {
    quote!(self.shared_limit.allow(&self.function, Self::NAME, cfg.shared_mem_bytes)?;)
}

/// `PARAM_SIZES`: the bytes each declared parameter passes, in order (a struct by value: its
/// Rust twin's `size_of`, which the layout checks hold equal to the C struct's).
pub(crate) fn param_sizes(decl: &KernelDecl) -> Vec<TokenStream> {
    decl.params
        .iter()
        .map(|p| match abi(p.kind) {
            Some(abi) => {
                let size = abi.size;
                quote!(#size)
            }
            None => {
                let ty = elem_in_hidden_module(p.kind.elem());
                quote!(::core::mem::size_of::<#ty>() as u32)
            }
        })
        .collect()
}
