//! `#[derive(kgraph::DeviceStruct)]`: makes a `#[repr(C)]` struct of `Pod` fields a kernel
//! argument (by value and by pointer) and records its layout.
//!
//! The soundness argument rests on `bytemuck::Pod`, which the user derives too
//! (`#[derive(bytemuck::Pod, bytemuck::Zeroable, Clone, Copy)]`): bytemuck's derive refuses
//! padding, non-`Pod` fields and layouts other than `repr(C)`/`repr(transparent)`, so every bit
//! pattern is a valid value. This derive asserts `T: bytemuck::Pod` at compile time and only
//! then emits the `unsafe impl`s of kgraph's `Pod` and cudarc's `DeviceRepr`/`ValidAsZeroBits`,
//! plus `kgraph::DeviceStruct` (field names, offsets, sizes; size; alignment), which
//! `#[kernel]` compares with the kernel's C struct.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

/// The derive's expansion, or a compile error.
pub fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<DeriveInput>(input).and_then(|input| derive(&input)) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

/// `#[repr(C)]` or `#[repr(C, align(N))]` among the attributes.
fn has_repr_c(input: &DeriveInput) -> bool {
    input.attrs.iter().filter(|a| a.path().is_ident("repr")).any(|a| {
        let mut c = false;
        let _ = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") {
                c = true;
            } else if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let _: TokenStream = content.parse()?;
            }
            Ok(())
        });
        c
    })
}

fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "`DeviceStruct` is for structs: a kernel's C struct parameter has a `#[repr(C)]` struct as its Rust twin",
        ));
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "a `DeviceStruct` cannot be generic: its layout must be the one C struct's",
        ));
    }
    if !has_repr_c(input) {
        return Err(syn::Error::new_spanned(
            name,
            format!(
                "`{name}` needs `#[repr(C)]` (or `#[repr(C, align(N))]` for a C `__align__(N)`): Rust may reorder \
                 the fields of other structs, and the kernel sees C's layout"
            ),
        ));
    }
    let Fields::Named(fields) = &data.fields else {
        return Err(syn::Error::new_spanned(
            name,
            "a `DeviceStruct` has named fields, as the C struct does: `#[kernel]` checks each by name",
        ));
    };
    let rows = fields.named.iter().map(|f| {
        let (ident, ty) = (f.ident.as_ref().expect("named fields have names"), &f.ty);
        let text = ident.to_string();
        let text = text.strip_prefix("r#").unwrap_or(&text);
        quote!((#text, ::core::mem::offset_of!(#name, #ident), ::core::mem::size_of::<#ty>()))
    });
    let text = name.to_string();
    Ok(quote! {
        // The soundness of the `unsafe impl`s below: `#name` is `bytemuck::Pod` (asserted here,
        // at compile time), so it is `repr(C)` or `repr(transparent)`, has no padding, and
        // every field accepts every bit pattern.
        const _: () = {
            const fn is_bytemuck_pod<T: ::kgraph::bytemuck::Pod>() {}
            is_bytemuck_pod::<#name>();
        };

        // SAFETY: `#name: bytemuck::Pod` (asserted above): a fixed layout of plain bytes with
        // no padding, so its value is passed to a kernel as its bytes, like the C struct.
        unsafe impl ::kgraph::cudarc::driver::DeviceRepr for #name {}
        // SAFETY: `bytemuck::Pod` implies `bytemuck::Zeroable`: all-zero bytes are a valid value.
        unsafe impl ::kgraph::cudarc::driver::ValidAsZeroBits for #name {}
        // SAFETY: `bytemuck::Pod`: every bit pattern is valid, the layout is fixed (`repr(C)`,
        // which `#[kernel]` checks against the kernel's C struct), and it is `Copy` with no
        // resources; `Send + Sync + 'static` are required by `kgraph::Pod` itself.
        unsafe impl ::kgraph::Pod for #name {}

        impl ::kgraph::DeviceStruct for #name {
            const NAME: &'static str = #text;
            const FIELDS: &'static [(&'static str, usize, usize)] = &[#(#rows),*];
            const SIZE: usize = ::core::mem::size_of::<#name>();
            const ALIGN: usize = ::core::mem::align_of::<#name>();
        }
    })
}
