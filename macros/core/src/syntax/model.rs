//! The typed model of `#[kernel]` declarations, shared by the kernel and graph generators.
//! Spans point back at the Rust declaration so every check can report on the right token.

use proc_macro2::Span;
use quote::ToTokens;

pub use super::condition::{Align, CmpOp, Cond, Requirement};
pub use super::expr::{Axis, Extent, ExtentExpr, ExtentFn, ExtentOp, LaunchDim};

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
    /// `kgraph::f16` ↔ `__half`, `half`
    F16,
    /// `kgraph::bf16` ↔ `__nv_bfloat16`, `nv_bfloat16`
    Bf16,
    /// `bool` ↔ `bool`, by value only (a `bool*` is `&[u8]`: not every byte is a `bool`)
    Bool,
    /// One of CUDA's vector types (`kgraph::Float4` ↔ `float4`)
    Vector(Vector),
    /// A `#[repr(C)]` struct deriving `kgraph::DeviceStruct`, by its path as written
    /// (`Params`, `crate::sim::Params`): its layout is checked against the kernel's C struct.
    Struct(&'static str),
}

/// CUDA's vector types kgraph has a Rust twin of (`runtime/src/vector.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Vector {
    Char2,
    Char4,
    UChar2,
    UChar4,
    Short2,
    Short4,
    UShort2,
    UShort4,
    Int2,
    Int3,
    Int4,
    UInt2,
    UInt3,
    UInt4,
    Float2,
    Float3,
    Float4,
    LongLong2,
    ULongLong2,
    Double2,
    Double3,
    Half2,
    Bf16x2,
}

/// One vector type: Rust name, canonical C name, component, lanes, alignment.
type VectorRow = (Vector, &'static str, &'static str, Elem, usize, usize);

/// The vector types with CUDA's layout (`vector_types.h`, `cuda_fp16.h`, `cuda_bf16.h`).
const VECTORS: [VectorRow; 23] = [
    (Vector::Char2, "Char2", "char2", Elem::I8, 2, 2),
    (Vector::Char4, "Char4", "char4", Elem::I8, 4, 4),
    (Vector::UChar2, "UChar2", "uchar2", Elem::U8, 2, 2),
    (Vector::UChar4, "UChar4", "uchar4", Elem::U8, 4, 4),
    (Vector::Short2, "Short2", "short2", Elem::I16, 2, 4),
    (Vector::Short4, "Short4", "short4", Elem::I16, 4, 8),
    (Vector::UShort2, "UShort2", "ushort2", Elem::U16, 2, 4),
    (Vector::UShort4, "UShort4", "ushort4", Elem::U16, 4, 8),
    (Vector::Int2, "Int2", "int2", Elem::I32, 2, 8),
    (Vector::Int3, "Int3", "int3", Elem::I32, 3, 4),
    (Vector::Int4, "Int4", "int4", Elem::I32, 4, 16),
    (Vector::UInt2, "UInt2", "uint2", Elem::U32, 2, 8),
    (Vector::UInt3, "UInt3", "uint3", Elem::U32, 3, 4),
    (Vector::UInt4, "UInt4", "uint4", Elem::U32, 4, 16),
    (Vector::Float2, "Float2", "float2", Elem::F32, 2, 8),
    (Vector::Float3, "Float3", "float3", Elem::F32, 3, 4),
    (Vector::Float4, "Float4", "float4", Elem::F32, 4, 16),
    (Vector::LongLong2, "LongLong2", "longlong2", Elem::I64, 2, 16),
    (Vector::ULongLong2, "ULongLong2", "ulonglong2", Elem::U64, 2, 16),
    (Vector::Double2, "Double2", "double2", Elem::F64, 2, 16),
    (Vector::Double3, "Double3", "double3", Elem::F64, 3, 8),
    (Vector::Half2, "Half2", "half2", Elem::F16, 2, 4),
    (Vector::Bf16x2, "Bf16x2", "nv_bfloat162", Elem::Bf16, 2, 4),
];

impl Vector {
    /// Every vector type kgraph has.
    pub fn all() -> impl Iterator<Item = Vector> {
        VECTORS.iter().map(|row| row.0)
    }

    fn row(self) -> &'static VectorRow {
        VECTORS.iter().find(|row| row.0 == self).expect("every vector type has a row")
    }

    /// The Rust name (`Float4`, as `kgraph::Float4`).
    pub fn rust_name(self) -> &'static str {
        self.row().1
    }

    /// The canonical C name (`float4`).
    pub fn c_name(self) -> &'static str {
        self.row().2
    }

    /// The component type and the number of components.
    pub fn component(self) -> (Elem, usize) {
        (self.row().3, self.row().4)
    }

    /// Its alignment in bytes (CUDA's `__builtin_align__`).
    pub fn align(self) -> usize {
        self.row().5
    }

    /// Its size in bytes.
    pub fn size(self) -> usize {
        let (elem, lanes) = self.component();
        elem.size().unwrap_or(0) * lanes
    }

    /// The vector type whose Rust name is `name`.
    pub fn from_rust(name: &str) -> Option<Vector> {
        VECTORS.iter().find(|row| row.1 == name).map(|row| row.0)
    }
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
    /// `PinnedMut<T>`: device address of mapped pinned host memory the kernel writes (kernel
    /// side `T*`): results land in host memory with no download copy.
    PinnedMut(Elem),
}

/// One declared parameter.
#[derive(Debug, Clone)]
pub struct Param {
    /// The Rust name.
    pub name: syn::Ident,
    /// How it is passed.
    pub kind: ParamKind,
    /// The declared Rust type as written (`&[f32; n]`, `Pinned<f32>`...), for messages and spans.
    pub ty: syn::Type,
    /// The declared extent of a pointer parameter (`n` in `&[f32; n]`), if any.
    pub extent: Option<Extent>,
    /// The span of `name: Type` where the compiler can join spans, else of the name.
    /// (For an error underlining the whole parameter use `quote!(#name: #ty)` with
    /// `syn::Error::new_spanned`, which works on stable.)
    pub span: Span,
    /// `rename(name = cu_name)` in the attribute: the `.cu` names this parameter otherwise, on
    /// purpose (the names are otherwise checked against the `.cu`'s).
    pub rename: Option<Rename>,
    /// Declared `Option<&[T; n]>` / `Option<&mut [T; n]>`: the kernel accepts NULL through this
    /// pointer, and the launch takes an `Option` (`None` passes a null pointer).
    pub nullable: bool,
}

/// `rename(rust = cu)` in `#[kernel(...)]`: a parameter the declaration deliberately names
/// otherwise than the `.cu` does (without it, differing names are a compile error).
#[derive(Debug, Clone)]
pub struct Rename {
    /// The Rust parameter's name.
    pub rust: syn::Ident,
    /// The `.cu`'s name for the parameter.
    pub cu: String,
    /// The span of `rust = cu`, where a rename that does not fit the `.cu` is reported.
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
    /// Span of the `name = "symbol"` literal when given, else of the fn name: where
    /// "kernel not found" errors point.
    pub symbol_span: Span,
    /// Span of the parenthesized parameter list, for arity errors.
    pub params_span: Span,
    /// The span of `unsafe(extents)` in the attribute, when given: the kernel author's
    /// promise that the kernel accesses each pointer argument only within its extent (and
    /// then the generated `launch` is safe and checked).
    pub extents_promise: Option<Span>,
    /// `unsafe(device_fn = "name")` in the attribute: the kernel author's promise that the
    /// `__device__` function `name(block, blocks, <the kernel's parameters>)` does what the
    /// kernel does as block `block` of a 1-D grid of `blocks` (what resident graphs run).
    pub device_fn: Option<DeviceFn>,
    /// `shared = <bytes>` in the attribute: the dynamic shared memory the kernel uses, over its
    /// integer scalars and `block.x/.y/.z` (part of the promise; a checked launch refuses a
    /// configuration giving less).
    pub shared: Option<Extent>,
    /// `max_block = <threads>` in the attribute: the most threads per block the kernel is
    /// written for, where its `.cu` has no `__launch_bounds__` (part of the promise; a checked
    /// launch refuses bigger blocks).
    pub max_block: Option<MaxBlock>,
    /// `requires(<cond>, ...)` in the attribute: the conditions under which the promise holds
    /// (a checked launch refuses one where any is false).
    pub requires: Vec<Requirement>,
    /// `align(<param> = <bytes>, ...)` in the attribute: pointer parameters whose address must
    /// be a multiple of `bytes` (part of the promise; a checked launch refuses one that is not).
    pub align: Vec<Align>,
}

/// `unsafe(device_fn = "name")` in `#[kernel(...)]`: the kernel's block as a device function.
#[derive(Debug, Clone)]
pub struct DeviceFn {
    /// The `__device__` function's C name.
    pub name: String,
    /// The name literal's span.
    pub span: Span,
}

/// `max_block = 128` in `#[kernel(...)]`: a bound on threads per block (`block.x * block.y *
/// block.z`), checked at launch as `__launch_bounds__` is.
#[derive(Debug, Clone, Copy)]
pub struct MaxBlock {
    /// The most threads per block, 1 to 1024.
    pub threads: u32,
    /// Where the number is written.
    pub span: Span,
}

impl KernelDecl {
    /// The parameter named `name`, if any.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The integer scalar parameters the `requires` conditions name, in parameter order: what
    /// the handle's `__requires` takes after the launch configuration.
    pub fn required_scalars(&self) -> Vec<&Param> {
        let named: Vec<String> = self.requires.iter().flat_map(|r| r.cond.names()).map(ToString::to_string).collect();
        self.params.iter().filter(|p| p.kind.is_integer_scalar() && named.contains(&p.name.to_string())).collect()
    }

    /// True when `launch` is safe: the declaration states extents under `unsafe(extents)`.
    pub fn has_checked_launch(&self) -> bool {
        self.extents_promise.is_some()
    }
}

impl Elem {
    /// Every number type, in the order of the docs (what graph specs name as dtypes).
    pub const ALL: [Elem; 10] =
        [Elem::F32, Elem::F64, Elem::I8, Elem::U8, Elem::I16, Elem::U16, Elem::I32, Elem::U32, Elem::I64, Elem::U64];

    /// The Rust spelling (`f32`, `f16`, `Float4`, a struct's path as written).
    pub fn rust_name(self) -> &'static str {
        match self {
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
            Elem::Bool => "bool",
            Elem::Vector(v) => v.rust_name(),
            Elem::Struct(path) => path,
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::I8 => "i8",
            Elem::U8 => "u8",
            Elem::I16 => "i16",
            Elem::U16 => "u16",
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::I64 => "i64",
            Elem::U64 => "u64",
        }
    }

    /// The canonical CUDA C spelling (`float`, `int`, `unsigned long long`, `__half`).
    pub fn c_name(self) -> &'static str {
        match self {
            Elem::F16 => "__half",
            Elem::Bf16 => "__nv_bfloat16",
            Elem::Bool => "bool",
            Elem::Vector(v) => v.c_name(),
            Elem::Struct(path) => path,
            Elem::F32 => "float",
            Elem::F64 => "double",
            Elem::I8 => "signed char",
            Elem::U8 => "unsigned char",
            Elem::I16 => "short",
            Elem::U16 => "unsigned short",
            Elem::I32 => "int",
            Elem::U32 => "unsigned int",
            Elem::I64 => "long long",
            Elem::U64 => "unsigned long long",
        }
    }

    /// The number type a Rust identifier names, if any (`"f32"` → `F32`).
    pub fn from_rust(name: &str) -> Option<Elem> {
        Elem::ALL.into_iter().find(|e| e.rust_name() == name)
    }

    /// The Rust type identifier of a number type (`f32`); other types are paths
    /// ([`Elem::rust_tokens`]).
    pub fn rust_ident(self) -> syn::Ident {
        let name = self.rust_name();
        let last = name.rsplit("::").next().unwrap_or(name);
        syn::parse_str(last).unwrap_or_else(|_| syn::Ident::new("__kgraph_unnamed", Span::call_site()))
    }

    /// The Rust type as the declaring module names it: `f32`, `::kgraph::f16`,
    /// `::kgraph::Float4`, or a struct's path as declared (code in a hidden module names it
    /// through `emit_util::elem_in_hidden_module`). In memory a C `bool` is `::kgraph::Bool`
    /// (only ever 0 or 1); a by-value `bool` parameter stays a Rust `bool` (`launch_param_type`).
    pub fn rust_tokens(self) -> proc_macro2::TokenStream {
        match self {
            Elem::Bool => quote::quote!(::kgraph::Bool),
            Elem::F16 | Elem::Bf16 | Elem::Vector(_) => {
                let ident = self.rust_ident();
                quote::quote!(::kgraph::#ident)
            }
            Elem::Struct(path) => path.parse().unwrap_or_else(|_| quote::quote!(::core::marker::PhantomData<()>)),
            _ => self.rust_ident().to_token_stream(),
        }
    }

    /// A number type (`f32` ... `u64`): what graph specs and extents deal in.
    pub fn is_number(self) -> bool {
        Elem::ALL.contains(&self)
    }

    /// An integer type (`i8` ... `u64`).
    pub fn is_integer(self) -> bool {
        self.is_number() && !matches!(self, Elem::F32 | Elem::F64)
    }

    /// Its size in bytes, where it is fixed by the type itself (not for a struct).
    pub fn size(self) -> Option<usize> {
        Some(match self {
            Elem::I8 | Elem::U8 | Elem::Bool => 1,
            Elem::I16 | Elem::U16 | Elem::F16 | Elem::Bf16 => 2,
            Elem::F32 | Elem::I32 | Elem::U32 => 4,
            Elem::F64 | Elem::I64 | Elem::U64 => 8,
            Elem::Vector(v) => v.size(),
            Elem::Struct(_) => return None,
        })
    }

    /// Its alignment in bytes (not for a struct).
    pub fn align(self) -> Option<usize> {
        match self {
            Elem::Vector(v) => Some(v.align()),
            _ => self.size(),
        }
    }
}

impl std::fmt::Display for Elem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rust_name())
    }
}

impl ParamKind {
    /// Mapped pinned host memory (`Pinned<T>` or `PinnedMut<T>`), as opposed to device memory
    /// or a value.
    pub fn is_pinned(self) -> bool {
        matches!(self, ParamKind::Pinned(_) | ParamKind::PinnedMut(_))
    }

    /// A pointer (`&[T]`, `&mut [T]`, `Pinned<T>`, `PinnedMut<T>`), as opposed to a value.
    pub fn is_pointer(self) -> bool {
        !matches!(self, ParamKind::Scalar(_))
    }

    /// An integer value (`i32`, `u64`...): what an extent may name.
    pub fn is_integer_scalar(self) -> bool {
        matches!(self, ParamKind::Scalar(elem) if elem.is_integer())
    }

    /// The kernel writes through it (`&mut [T]` or `PinnedMut<T>`).
    pub fn is_written(self) -> bool {
        matches!(self, ParamKind::Slice { mutable: true, .. } | ParamKind::PinnedMut(_))
    }

    /// The element type, whatever the passing mode.
    pub fn elem(self) -> Elem {
        match self {
            ParamKind::Slice { elem, .. }
            | ParamKind::Scalar(elem)
            | ParamKind::Pinned(elem)
            | ParamKind::PinnedMut(elem) => elem,
        }
    }

    /// The declaration's Rust spelling: `&[f32]`, `&mut [f32]`, `f32`, `Pinned<f32>`,
    /// `PinnedMut<f32>`.
    pub fn rust_decl(self) -> String {
        match self {
            ParamKind::Slice { elem, mutable: false } => format!("&[{elem}]"),
            ParamKind::Slice { elem, mutable: true } => format!("&mut [{elem}]"),
            ParamKind::Scalar(elem) => elem.to_string(),
            ParamKind::Pinned(elem) => format!("Pinned<{elem}>"),
            ParamKind::PinnedMut(elem) => format!("PinnedMut<{elem}>"),
        }
    }

    /// The kernel-side C spelling it corresponds to: `const float*`, `float*`, `float`.
    pub fn c_decl(self) -> String {
        match self {
            ParamKind::Slice { elem, mutable: false } | ParamKind::Pinned(elem) => format!("const {}*", elem.c_name()),
            ParamKind::Slice { elem, mutable: true } | ParamKind::PinnedMut(elem) => format!("{}*", elem.c_name()),
            ParamKind::Scalar(elem) => elem.c_name().to_string(),
        }
    }
}
