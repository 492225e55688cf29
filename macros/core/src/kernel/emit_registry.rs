//! Code generation for a `#[kernels] mod`: the `Kernels` registry struct that loads every
//! handle of the module together. It only reads the checked model.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Attribute, Ident, Visibility};

use super::emit::cfg_attrs;
use crate::emit_util::doc_lines;

/// One registry entry: field name, handle type, `cfg`s, and a line for the docs.
pub(crate) struct Entry<'a> {
    pub field: Ident,
    pub handle: Ident,
    pub attrs: &'a [Attribute],
    pub vis: &'a Visibility,
    pub doc: String,
}

/// The registry struct's rustdoc: one line per kernel.
fn registry_doc(entries: &[Entry<'_>]) -> TokenStream {
    let mut doc = vec![
        "The kernels declared in this module, loaded together: kernels of one `.cu` file share".to_string(),
        "one module.".to_string(),
        String::new(),
    ];
    // No link to a handle behind `#[cfg]`: it may not exist in this build.
    let line = |e: &Entry<'_>| match cfg_attrs(e.attrs).is_empty() {
        true => format!("- [`{}`]: {}", e.handle, e.doc),
        false => format!("- `{}`: {}", e.handle, e.doc),
    };
    doc.extend(entries.iter().map(line));
    doc_lines(doc)
}

/// `pub struct Kernels { pub <name>: <Handle>, ... }` with `load`/`load_with`; with `stub`,
/// the methods never return (a declaration in the module has errors).
pub(crate) fn registry(entries: &[Entry<'_>], stub: bool) -> TokenStream {
    let fields = entries.iter().map(|e| {
        let (field, handle, vis, doc) = (&e.field, &e.handle, e.vis, &e.doc);
        let cfgs = cfg_attrs(e.attrs);
        let doc = format!(" {doc}");
        quote!(#(#cfgs)* #[doc = #doc] #vis #field: #handle)
    });
    let inits = entries.iter().map(|e| {
        let (field, handle) = (&e.field, &e.handle);
        let cfgs = cfg_attrs(e.attrs);
        quote!(#(#cfgs)* #field: #handle::load(cache)?)
    });
    let doc = registry_doc(entries);
    let load_with_body = if stub {
        quote!(::core::unreachable!("a `#[kernel]` declaration in this module has errors"))
    } else {
        quote!(::core::result::Result::Ok(Self { #(#inits),* }))
    };
    let allow_struct = stub.then(|| quote!(#[allow(dead_code)]));
    let allow_impl = if stub { quote!(#[allow(dead_code, unused_variables)]) } else { quote!(#[allow(dead_code)]) };
    let kernels = format_ident!("Kernels");
    quote! {
        #doc
        #[derive(Debug, Clone)]
        #allow_struct
        pub struct #kernels {
            #(#fields),*
        }

        #allow_impl
        impl #kernels {
            /// Loads every kernel on `device`, each `.cu` module once.
            ///
            /// # Errors
            ///
            /// The first kernel that fails to load (`kgraph::ModuleError::Load` or `FunctionNotFound`).
            pub fn load(device: &::kgraph::Device) -> ::kgraph::Result<Self> {
                Self::load_with(&mut ::kgraph::expert::ModuleCache::new(device.context()))
            }

            /// Loads every kernel through `cache`, reusing the modules already in it.
            ///
            /// # Errors
            ///
            /// As [`Self::load`].
            pub fn load_with(cache: &mut ::kgraph::expert::ModuleCache) -> ::kgraph::Result<Self> {
                #load_with_body
            }
        }
    }
}
