//! The compile-time layout checks of struct parameters: for each parameter whose C type is a
//! struct the `.cu` defines, `const` items that assert the Rust twin is a
//! `kgraph::DeviceStruct` with the C struct's size, alignment, and every field's offset, size
//! and type. A mismatch is a compile error naming both numbers ("kgraph: struct `Params` field
//! `dt` (C `Params`, kernels/x.cu:3): C offset 8, Rust offset 12").

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Type;

use super::config::Resolved;
use crate::cuda::types::{CField, CFieldType, CStruct, CuBase};
use crate::syntax::model::KernelDecl;

/// The element type as the declaration writes it: `Params` in `&[Params; n]`, `Pinned<[Params; n]>`,
/// `Params`.
fn elem_type(ty: &Type) -> &Type {
    match ty {
        Type::Group(g) => elem_type(&g.elem),
        Type::Paren(p) => elem_type(&p.elem),
        Type::Reference(r) => elem_type(&r.elem),
        Type::Slice(s) => elem_type(&s.elem),
        Type::Array(a) => elem_type(&a.elem),
        Type::Path(p) => match p.path.segments.last().map(|s| &s.arguments) {
            Some(syn::PathArguments::AngleBracketed(a)) if a.args.len() == 1 => match &a.args[0] {
                syn::GenericArgument::Type(t) => elem_type(t),
                _ => ty,
            },
            _ => ty,
        },
        _ => ty,
    }
}

/// A field name as a Rust identifier (`r#type` for a C field named like a Rust keyword).
fn field_ident(name: &str, span: Span) -> syn::Ident {
    match syn::parse_str::<syn::Ident>(name) {
        Ok(mut ident) => {
            ident.set_span(span);
            ident
        }
        Err(_) => syn::Ident::new_raw(name, span),
    }
}

/// The Rust type a field of a number, half, vector or pointer type must have, with its array
/// lengths (`[[f32; 3]; 3]`); `None` for a struct (checked through its `DeviceStruct`).
fn field_type(field: &CField) -> Option<TokenStream> {
    let mut ty = match &field.ty {
        CFieldType::Elem(crate::syntax::model::Elem::Bool) => quote!(u8),
        CFieldType::Elem(e) => e.rust_tokens(),
        CFieldType::Pointer => quote!(u64),
        CFieldType::Struct(_) => return None,
    };
    for n in field.dims.iter().rev() {
        ty = quote!([#ty; #n]);
    }
    Some(ty)
}

/// `("name", offset, size)` for each field of a C struct.
fn c_fields(s: &CStruct) -> TokenStream {
    let rows = s.fields.iter().map(|f| {
        let (name, offset, size) = (&f.name, f.offset, f.size);
        quote!((#name, #offset, #size))
    });
    quote!(&[#(#rows),*])
}

/// The checks of one Rust twin `rust` (as written, with its span) against C struct `s`.
fn struct_checks(rust: &Type, s: &CStruct, file: &str) -> Vec<TokenStream> {
    let span = rust.span();
    let rust_name = crate::syntax::text::tidy_tokens(&quote!(#rust));
    let ctx = format!("kgraph: struct `{rust_name}` (C `{}`, {file}:{})", s.name, s.line);
    let (size, align) = (s.size, s.align);
    let mut out = vec![
        quote_spanned! {span=>
            const _: () = {
                const fn device_struct<T: ::kgraph::DeviceStruct>() {}
                device_struct::<#rust>();
                ::kgraph::__private::layout::expect_eq(#ctx, "size", #size, ::core::mem::size_of::<#rust>());
            };
        },
        quote_spanned! {span=>
            const _: () = ::kgraph::__private::layout::expect_eq(#ctx, "alignment", #align, ::core::mem::align_of::<#rust>());
        },
    ];
    for f in &s.fields {
        let field = field_ident(&f.name, span);
        let dims: String = f.dims.iter().map(|n| format!("[{n}]")).collect();
        let fctx = format!(
            "kgraph: struct `{rust_name}` field `{}` (C `{} {}{dims}`, {file}:{})",
            f.name, f.spelled, f.name, f.line
        );
        let (offset, fsize) = (f.offset, f.size);
        let typed = match (field_type(f), &f.ty) {
            (Some(t), _) => quote_spanned!(span=> let _: fn(&#rust) -> &#t = |s| &s.#field;),
            (None, CFieldType::Struct(inner)) => {
                let nctx = format!(
                    "kgraph: struct `{rust_name}` field `{}` (C `{}`, {file}:{})",
                    f.name, inner.name, inner.line
                );
                let fields = c_fields(inner);
                let project = match f.dims.len() {
                    0 => quote_spanned!(span=> ::kgraph::__private::layout::nested_fields(|s: &#rust| &s.#field)),
                    1 => quote_spanned!(span=> ::kgraph::__private::layout::nested_array_fields(|s: &#rust| &s.#field)),
                    _ => TokenStream::new(),
                };
                if project.is_empty() {
                    TokenStream::new()
                } else {
                    quote_spanned!(span=> ::kgraph::__private::layout::expect_fields(#nctx, #project, #fields);)
                }
            }
            (None, _) => TokenStream::new(),
        };
        out.push(quote_spanned! {span=>
            const _: () = {
                ::kgraph::__private::layout::expect_eq(#fctx, "offset", #offset, ::core::mem::offset_of!(#rust, #field));
                ::kgraph::__private::layout::expect_eq(
                    #fctx, "size", #fsize, ::kgraph::__private::layout::field_size(|s: &#rust| &s.#field)
                );
                #typed
            };
        });
    }
    out
}

/// The layout checks of every struct parameter of a verified declaration (each twin once), as
/// `const _` items.
pub(crate) fn layout_checks(decl: &KernelDecl, resolved: &Resolved) -> Vec<TokenStream> {
    let mut out = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for (param, cu) in decl.params.iter().zip(&resolved.kernel.params) {
        let CuBase::Struct(s) = &cu.ty.base else { continue };
        let rust = elem_type(&param.ty);
        let key = (crate::syntax::text::tidy_tokens(&quote!(#rust)), s.name.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        out.extend(struct_checks(rust, s, &resolved.display));
    }
    out
}
