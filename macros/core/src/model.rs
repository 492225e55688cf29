//! The typed model of `#[kernel]` declarations, shared by the kernel and graph generators.
//! Spans point back at the Rust declaration so every check can report on the right token.

use proc_macro2::Span;

/// A kernel parameter's element type (Rust side), with its CUDA spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Elem {
    /// `f32` ↔ `float`
    F32,
    /// `f64` ↔ `double`
    F64,
    /// `i8` ↔ `signed char`, `int8_t`
    I8,
    /// `u8` ↔ `unsigned char`, `uint8_t`
    U8,
    /// `i16` ↔ `short`, `int16_t`
    I16,
    /// `u16` ↔ `unsigned short`, `uint16_t`
    U16,
    /// `i32` ↔ `int`, `int32_t`
    I32,
    /// `u32` ↔ `unsigned`, `unsigned int`, `uint32_t`
    U32,
    /// `i64` ↔ `long long`, `int64_t`, `long` (LP64)
    I64,
    /// `u64` ↔ `unsigned long long`, `uint64_t`, `size_t`
    U64,
}

/// How a parameter is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// `&[T]` (kernel side `const T*`) or `&mut [T]` (kernel side `T*`).
    Slice {
        /// Element type.
        elem: Elem,
        /// `&mut [T]`: the kernel writes it.
        mutable: bool,
    },
    /// `T` by value.
    Scalar(Elem),
    /// `Pinned<T>`: device address of mapped pinned host memory (kernel side `const T*`).
    Pinned(Elem),
}

/// One declared parameter.
#[derive(Debug, Clone)]
pub struct Param {
    /// The Rust name.
    pub name: syn::Ident,
    /// How it is passed.
    pub kind: ParamKind,
    /// The span of the whole `name: Type` for errors.
    pub span: Span,
}

/// One `#[kernel("file.cu")] pub fn name(...);` declaration.
#[derive(Debug, Clone)]
pub struct KernelDecl {
    /// The Rust fn name (snake case); the handle type is its UpperCamelCase.
    pub name: syn::Ident,
    /// The `extern "C"` symbol in the `.cu` (defaults to `name`).
    pub symbol: String,
    /// The `.cu` file as written in the attribute, relative to the crate's `kernels/` folder.
    pub file: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Visibility of the declaration.
    pub vis: syn::Visibility,
    /// Doc comments and other attributes written on the declaration (kept on the handle).
    pub attrs: Vec<syn::Attribute>,
    /// Span of the attribute's file literal, for file/kernel-level errors.
    pub file_span: Span,
}
