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
    /// `PinnedMut<T>`: device address of mapped pinned host memory the kernel writes (kernel
    /// side `T*`): results land in host memory with no download copy.
    PinnedMut(Elem),
}

/// A binary operator of an extent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtentOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (truncating, as C does)
    Div,
    /// `%`
    Rem,
}

/// `min(a, b)` or `max(a, b)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtentFn {
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
}

/// An extent expression.
#[derive(Debug, Clone)]
pub enum ExtentExpr {
    /// An integer literal (no suffix).
    Int {
        /// Its value.
        value: u64,
        /// Where it is written.
        span: Span,
    },
    /// A parameter name (a scalar parameter, once checked).
    Name(syn::Ident),
    /// `lhs op rhs`.
    Binary {
        /// The operator.
        op: ExtentOp,
        /// Left operand.
        lhs: Box<ExtentExpr>,
        /// Right operand.
        rhs: Box<ExtentExpr>,
    },
    /// `min(a, b)` or `max(a, b)`.
    Call {
        /// Which.
        func: ExtentFn,
        /// First argument.
        a: Box<ExtentExpr>,
        /// Second argument.
        b: Box<ExtentExpr>,
    },
}

/// A pointer parameter's extent as declared.
#[derive(Debug, Clone)]
pub struct Extent {
    /// The expression.
    pub expr: ExtentExpr,
    /// The expression as written (`batch * n_hid`), for messages and docs.
    pub text: String,
    /// The span of the expression.
    pub span: Span,
}

impl ExtentOp {
    /// The operator's spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            ExtentOp::Add => "+",
            ExtentOp::Sub => "-",
            ExtentOp::Mul => "*",
            ExtentOp::Div => "/",
            ExtentOp::Rem => "%",
        }
    }
}

impl ExtentExpr {
    /// Every name the expression uses, in order (with repeats).
    pub fn names(&self) -> Vec<&syn::Ident> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let ExtentExpr::Name(name) = e {
                out.push(name);
            }
        });
        out
    }

    /// Every literal the expression uses, with its span.
    pub fn literals(&self) -> Vec<(u64, Span)> {
        let mut out = Vec::new();
        self.visit(&mut |e| {
            if let ExtentExpr::Int { value, span } = e {
                out.push((*value, *span));
            }
        });
        out
    }

    fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a ExtentExpr)) {
        f(self);
        match self {
            ExtentExpr::Int { .. } | ExtentExpr::Name(_) => {}
            ExtentExpr::Binary { lhs, rhs, .. } => {
                lhs.visit(f);
                rhs.visit(f);
            }
            ExtentExpr::Call { a, b, .. } => {
                a.visit(f);
                b.visit(f);
            }
        }
    }
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
}

impl KernelDecl {
    /// The parameter named `name`, if any.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// True when `launch` is safe: the declaration states extents under `unsafe(extents)`.
    pub fn has_checked_launch(&self) -> bool {
        self.extents_promise.is_some()
    }
}

impl Elem {
    /// Every element type, in the order of the docs.
    pub const ALL: [Elem; 10] =
        [Elem::F32, Elem::F64, Elem::I8, Elem::U8, Elem::I16, Elem::U16, Elem::I32, Elem::U32, Elem::I64, Elem::U64];

    /// The Rust spelling (`f32`).
    pub fn rust_name(self) -> &'static str {
        match self {
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

    /// The canonical CUDA C spelling (`float`, `int`, `unsigned long long`).
    pub fn c_name(self) -> &'static str {
        match self {
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

    /// The element type a Rust identifier names, if any (`"f32"` → `F32`).
    pub fn from_rust(name: &str) -> Option<Elem> {
        Elem::ALL.into_iter().find(|e| e.rust_name() == name)
    }

    /// The Rust type tokens (`f32`).
    pub fn rust_ident(self) -> syn::Ident {
        syn::Ident::new(self.rust_name(), Span::call_site())
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
        matches!(self, ParamKind::Scalar(elem) if !matches!(elem, Elem::F32 | Elem::F64))
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
