//! The C type model the `.cu` reader produces: a parameter's base type ([`CuBase`]) and a struct
//! the file defines with its layout ([`CStruct`], its [`CField`]s).

use crate::syntax::model::Elem;

/// A base type: one of kgraph's element types, or a C type without a kgraph counterpart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CuBase {
    /// `float`, `int`, `uint64_t`, `bool`, `__half`, `float4`, an enum or typedef of one, ...
    Elem(Elem),
    /// `void` (as `void*`, untyped device memory).
    Void,
    /// A struct the file defines, with its layout.
    Struct(Box<CStruct>),
    /// A name that is no type kgraph knows and the file does not define.
    Unknown,
    /// A type the file defines that kgraph cannot pass, and why (a union, a bit-field...).
    Unreadable(String),
    /// `long double`, `dim3`, `double4`, ... (known to C, not passable by kgraph).
    Other,
}

/// A C struct with its layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CStruct {
    /// Its name in C.
    pub name: String,
    /// The line of its definition (1-based).
    pub line: usize,
    /// `sizeof`.
    pub size: usize,
    /// `alignof`.
    pub align: usize,
    /// Its fields, in order.
    pub fields: Vec<CField>,
}

/// One field of a [`CStruct`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CField {
    /// The field's name.
    pub name: String,
    /// Its element type.
    pub ty: CFieldType,
    /// Array lengths, outermost first (`[3][4]` is `[3, 4]`); empty for a single value.
    pub dims: Vec<usize>,
    /// `offsetof`.
    pub offset: usize,
    /// `sizeof` of the whole field (arrays included).
    pub size: usize,
    /// Its alignment (an `alignas` included).
    pub align: usize,
    /// The type as spelled, for messages (`float`, `Inner`, `float*`).
    pub spelled: String,
    /// Its line (1-based).
    pub line: usize,
}

/// A field's element type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CFieldType {
    /// A number, `bool`, half or vector type (enums and typedefs resolved).
    Elem(Elem),
    /// Any pointer: a device address, 8 bytes (a Rust twin holds it as `u64`).
    Pointer,
    /// A struct the file defines.
    Struct(Box<CStruct>),
}

impl CFieldType {
    pub(crate) fn size_align(&self) -> (usize, usize) {
        match self {
            CFieldType::Elem(e) => (e.size().unwrap_or(0), e.align().unwrap_or(1)),
            CFieldType::Pointer => (8, 8),
            CFieldType::Struct(s) => (s.size, s.align),
        }
    }
}
