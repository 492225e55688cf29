//! Declared Rust parameter types: which [`ParamKind`] each is passed as, the extent written as
//! an array length (`&[f32; n]`), and the located error for a type no kernel can take.

use quote::ToTokens;
use syn::Type;

use super::model::{Elem, ParamKind, Vector};
use super::text::tidy_tokens;

const TYPE_HELP: &str = "kernel parameters are `&[T]` (for `const T*`), `&mut [T]` (for `T*`), `T` (by value), \
     `Pinned<T>` (`const T*` into pinned host memory) or `PinnedMut<T>` (`T*` into pinned host memory), \
     with T one of f32 f64 i8 u8 i16 u16 i32 u32 i64 u64, `kgraph::f16`, `kgraph::bf16`, a CUDA vector type \
     (`kgraph::Float4`, `kgraph::Half2`, ...), `bool` (by value, or `&[bool]` over `kgraph::Bool` buffers) or a `#[derive(kgraph::DeviceStruct)]` struct; \
     a pointer's extent is written as an array length: `&[T; n]`, `&mut [T; n]`, `Pinned<[T; n]>`, `PinnedMut<[T; n]>`";

/// Maps a declared Rust type to how the argument is passed, and the length expression of its
/// extent when it is written as an array (`&[f32; n]`, `Pinned<[f32; n]>`).
pub(crate) fn classify_type(ty: &Type) -> syn::Result<(ParamKind, Option<&syn::Expr>)> {
    match ty {
        Type::Group(g) => classify_type(&g.elem),
        Type::Paren(p) => classify_type(&p.elem),
        Type::Reference(r) => {
            if let Some(lifetime) = &r.lifetime {
                return Err(syn::Error::new_spanned(
                    lifetime,
                    format!(
                        "kernel parameters take no lifetimes: a declaration has no generics to declare `{lifetime}` in, \
                         and the launch borrows its arguments for the call; write `&{}[..]`",
                        if r.mutability.is_some() { "mut " } else { "" }
                    ),
                ));
            }
            let mutable = r.mutability.is_some();
            let (elem, len) = pointee(&r.elem, "slice element").ok_or_else(|| unsupported(ty))??;
            Ok((ParamKind::Slice { elem, mutable }, len))
        }
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().ok_or_else(|| unsupported(ty))?;
            if last.ident == "Pinned" || last.ident == "PinnedMut" {
                if !is_kgraph_path(&p.path) {
                    return Err(syn::Error::new_spanned(
                        ty,
                        format!(
                            "`{}` here is not kgraph's: write `{0}<..>` or `kgraph::{0}<..>` for mapped pinned memory \
                             (a type of another path cannot be passed to a kernel)",
                            last.ident
                        ),
                    ));
                }
                return classify_pinned(ty, last);
            }
            if p.path.segments.iter().all(|s| s.arguments.is_none()) {
                return Ok((ParamKind::Scalar(elem_of(ty, "scalar")?), None));
            }
            Err(unsupported(ty))
        }
        _ => Err(unsupported(ty)),
    }
}

/// The element type and extent of a pointee written `[T]`, `[T; len]` (or, for `Pinned<T>`,
/// a bare `T`), or `None` when it is none of these.
fn pointee<'t>(ty: &'t Type, what: &str) -> Option<syn::Result<(Elem, Option<&'t syn::Expr>)>> {
    match ty {
        Type::Group(g) => pointee(&g.elem, what),
        Type::Slice(s) => Some(elem_of(&s.elem, what).map(|e| (e, None))),
        Type::Array(a) => Some(elem_of(&a.elem, what).map(|e| (e, Some(&a.len)))),
        _ => None,
    }
}

/// Whether `path` names kgraph's own item: a bare name (`Pinned`), or one under `kgraph::` /
/// `::kgraph::` (`kgraph::Pinned`).
fn is_kgraph_path(path: &syn::Path) -> bool {
    match path.segments.len() {
        1 => path.leading_colon.is_none(),
        2 => path.segments[0].ident == "kgraph",
        _ => false,
    }
}

/// `Pinned<T>`, `Pinned<[T; len]>`, `PinnedMut<T>`, `PinnedMut<[T; len]>`.
fn classify_pinned<'t>(ty: &'t Type, last: &'t syn::PathSegment) -> syn::Result<(ParamKind, Option<&'t syn::Expr>)> {
    let wrapper = last.ident.to_string();
    let arg = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    };
    let arg = arg.ok_or_else(|| {
        syn::Error::new_spanned(
            ty,
            format!("`{wrapper}` takes one element type: `{wrapper}<f32>` or `{wrapper}<[f32; n]>`"),
        )
    })?;
    let what = format!("`{wrapper}` element");
    let (elem, len) = match pointee(arg, &what) {
        Some(found) => found?,
        None => (elem_of(arg, &what)?, None),
    };
    Ok((if wrapper == "Pinned" { ParamKind::Pinned(elem) } else { ParamKind::PinnedMut(elem) }, len))
}

fn elem_of(ty: &Type, what: &str) -> syn::Result<Elem> {
    if let Type::Group(g) = ty {
        return elem_of(&g.elem, what);
    }
    if let Type::Path(p) = ty {
        let plain = p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_none());
        if let (Some(last), true) = (p.path.segments.last(), plain) {
            return named_elem(ty, &p.path, &last.ident.to_string(), what);
        }
    }
    Err(unsupported(ty))
}

/// The element type a plain path names: a number type, `f16`/`bf16` (`kgraph::f16`,
/// `half::f16`), `bool` (by value), a CUDA vector type (`kgraph::Float4`), else a struct.
fn named_elem(ty: &Type, path: &syn::Path, last: &str, what: &str) -> syn::Result<Elem> {
    let single = path.segments.len() == 1 && path.leading_colon.is_none();
    if let Some(elem) = Elem::from_rust(last).filter(|_| single) {
        return Ok(elem);
    }
    let hint = match last {
        "f16" => return Ok(Elem::F16),
        "bf16" => return Ok(Elem::Bf16),
        // By value a Rust `bool`; behind a pointer a device buffer of `kgraph::Bool` (0 or 1).
        "bool" if single && (what == "scalar" || what == "slice element") => return Ok(Elem::Bool),
        "bool" if single => {
            " (mapped host memory is read back as any byte, and a kernel's `bool` must be 0 or 1: \
                              pass `bool*` as a device buffer, `&[bool; n]` / `&mut [bool; n]` (`kgraph::Bool`))"
        }
        "usize" if single => " (`usize` has no fixed CUDA width: use `u64` for `size_t` or `u32`)",
        "isize" if single => " (`isize` has no fixed CUDA width: use `i64` or `i32`)",
        "char" if single => " (a Rust `char` is 4 bytes: C `char` is `i8`, `unsigned char` is `u8`)",
        _ if Elem::from_rust(last).is_some() => "",
        _ => match Vector::from_rust(last) {
            Some(v) => return Ok(Elem::Vector(v)),
            None => return Ok(Elem::Struct(Box::leak(tidy_tokens(&path.to_token_stream()).into_boxed_str()))),
        },
    };
    Err(syn::Error::new_spanned(
        ty,
        format!("unsupported {what} type `{}`{hint}: {TYPE_HELP}", tidy_tokens(&ty.to_token_stream())),
    ))
}

fn unsupported(ty: &Type) -> syn::Error {
    syn::Error::new_spanned(
        ty,
        format!("unsupported kernel parameter type `{}`: {TYPE_HELP}", tidy_tokens(&ty.to_token_stream())),
    )
}

/// The type inside `Option<..>` (also `core::option::Option` / `std::option::Option`), when
/// `ty` is one: `Some(Ok(inner))`, or `Some(Err(..))` for an `Option` without exactly one type
/// argument; `None` for any other type.
pub(crate) fn optional_pointee(ty: &Type) -> Option<syn::Result<&Type>> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let std_path = p.path.segments.len() == 1
        || matches!(p.path.segments.first(), Some(s) if s.ident == "core" || s.ident == "std");
    if p.qself.is_some() || last.ident != "Option" || !std_path {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return Some(Err(syn::Error::new_spanned(ty, "`Option` takes the pointer type: `Option<&[T; n]>`")));
    };
    match args.args.iter().collect::<Vec<_>>()[..] {
        [syn::GenericArgument::Type(inner)] => Some(Ok(inner)),
        _ => Some(Err(syn::Error::new_spanned(ty, "`Option` takes one pointer type: `Option<&[T; n]>`"))),
    }
}

/// How an `Option<inner>` parameter is passed: a pointer the kernel accepts as NULL, so only
/// `&[T]` and `&mut [T]` (device memory) may be optional.
pub(crate) fn classify_nullable(inner: &Type) -> syn::Result<(ParamKind, Option<&syn::Expr>)> {
    match classify_type(inner)? {
        (kind @ ParamKind::Slice { .. }, len) => Ok((kind, len)),
        _ => Err(syn::Error::new_spanned(
            inner,
            "`Option<..>` is for a device pointer the kernel accepts as NULL: `Option<&[T; n]>` (`const T*`) or \
             `Option<&mut [T; n]>` (`T*`); `None` passes a null pointer",
        )),
    }
}
