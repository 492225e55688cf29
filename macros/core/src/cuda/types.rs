//! C types: [`CuBase`] and the struct layout model ([`CStruct`]), then C type names: CUDA's built-in types kgraph has a Rust twin of (`__half`, `float4`,
//! `cudaTextureObject_t`, ...), and the types a `.cu` file defines itself: `typedef` and
//! `using` aliases, `enum`s (by their underlying type) and `struct`s (laid out in
//! [`super::structs`]). Built-in names win over definitions, so a preprocessed file (where
//! `float4` and `__half` are structs of the CUDA headers) reads the same as the source.

use super::lex::{Tok, Token};
use crate::syntax::model::{Elem, Vector};

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

const TYPE_WORDS: [&str; 10] =
    ["signed", "unsigned", "short", "long", "int", "char", "float", "double", "void", "bool"];

/// A C keyword that is (part of) a type name: `unsigned`, `int`, `float`, ...
pub(crate) fn is_type_word(word: &str) -> bool {
    TYPE_WORDS.contains(&word)
}

/// Base type from C keywords (`unsigned long long int`); `None` for an invalid combination.
pub(crate) fn word_type(words: &[&str]) -> Option<CuBase> {
    let count = |w: &str| words.iter().filter(|x| **x == w).count();
    let (signed, unsigned, short, long, int, char) =
        (count("signed"), count("unsigned"), count("short"), count("long"), count("int"), count("char"));
    let (float, double, void, boolean) = (count("float"), count("double"), count("void"), count("bool"));
    if signed + unsigned > 1 || int > 1 || char > 1 || short > 1 || long > 2 || (short > 0 && long > 0) {
        return None;
    }
    let sign_or_size = signed + unsigned + short + long + int + char;
    if float + double + void + boolean > 0 {
        let one = float + double + void + boolean == 1;
        return match () {
            _ if one && double == 1 && long == 1 && sign_or_size == 1 => Some(CuBase::Other),
            _ if one && sign_or_size == 0 && float == 1 => Some(CuBase::Elem(Elem::F32)),
            _ if one && sign_or_size == 0 && double == 1 => Some(CuBase::Elem(Elem::F64)),
            _ if one && sign_or_size == 0 && void == 1 => Some(CuBase::Void),
            _ if one && sign_or_size == 0 => Some(CuBase::Elem(Elem::Bool)),
            _ => None,
        };
    }
    let u = unsigned == 1;
    let elem = if char == 1 {
        if short + long + int > 0 {
            return None;
        }
        // Plain `char` is signed on x86-64 and in CUDA device code.
        match (signed, unsigned) {
            (_, 1) => Elem::U8,
            _ => Elem::I8,
        }
    } else if short == 1 {
        if u {
            Elem::U16
        } else {
            Elem::I16
        }
    } else if long >= 1 {
        if u {
            Elem::U64
        } else {
            Elem::I64
        }
    } else if u {
        Elem::U32
    } else {
        Elem::I32
    };
    Some(CuBase::Elem(elem))
}

/// The base type of a C type name that needs no definition in the file: fixed-width integers,
/// CUDA's half, bfloat16 and vector types, texture and surface objects. `None` when the name
/// is not one of them.
pub(crate) fn builtin(name: &str) -> Option<CuBase> {
    let elem = match name {
        "int8_t" => Elem::I8,
        "uint8_t" | "uchar" => Elem::U8,
        "int16_t" => Elem::I16,
        "uint16_t" | "ushort" => Elem::U16,
        "int32_t" => Elem::I32,
        "uint32_t" | "uint" => Elem::U32,
        // `clock_t` is `long` in glibc (LP64), as nvcc compiles device code on Linux.
        "int64_t" | "ptrdiff_t" | "longlong" | "intptr_t" | "ssize_t" | "clock_t" => Elem::I64,
        "uint64_t" | "size_t" | "ulonglong" | "uintptr_t" => Elem::U64,
        // `typedef unsigned long long` in the CUDA headers.
        "cudaTextureObject_t" | "cudaSurfaceObject_t" | "CUtexObject" | "CUsurfObject" => Elem::U64,
        "half" | "__half" => Elem::F16,
        "__nv_bfloat16" | "nv_bfloat16" => Elem::Bf16,
        "half2" | "__half2" => Elem::Vector(Vector::Half2),
        "__nv_bfloat162" | "nv_bfloat162" => Elem::Vector(Vector::Bf16x2),
        _ => match Vector::all().find(|v| v.c_name() == name) {
            Some(v) => Elem::Vector(v),
            None if is_cuda_only_type(name) => return Some(CuBase::Other),
            None => return None,
        },
    };
    Some(CuBase::Elem(elem))
}

/// CUDA types kgraph has no Rust twin of: other vector widths, `dim3`, tensor maps.
fn is_cuda_only_type(name: &str) -> bool {
    const NAMED: [&str; 8] =
        ["dim3", "wchar_t", "CUtensorMap", "char16_t", "char32_t", "__half_raw", "__nv_bfloat16_raw", "cudaStream_t"];
    const VECTOR_BASES: [&str; 12] = [
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
    ];
    NAMED.contains(&name)
        || name.strip_suffix(['1', '2', '3', '4']).is_some_and(|base| VECTOR_BASES.contains(&base))
        || name.ends_with("_16a")
        || name.ends_with("_32a")
}

/// What the Rust side of a C type with no kgraph parameter type could be, for messages.
pub(crate) fn hint_for(spelled: &str) -> Option<&'static str> {
    Some(match spelled {
        "dim3" => "pass the three sizes as `u32` scalars",
        "long double" => "`long double` has no Rust counterpart: use `double` (`f64`)",
        "wchar_t" | "char16_t" | "char32_t" => "use a fixed-width integer (`uint16_t`, `uint32_t`)",
        _ if spelled.ends_with('1') => "a one-component vector is its component: use the scalar type",
        _ if spelled.ends_with("_16a") || spelled.ends_with("_32a") => {
            "derive `kgraph::DeviceStruct` on a `#[repr(C, align(N))]` twin and pass a struct"
        }
        _ => return None,
    })
}

/// A type the file defines.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Def<'t> {
    /// `typedef TARGET NAME;` or `using NAME = TARGET;`: the target's tokens, with the
    /// declarator's pointers and array lengths.
    Alias { target: &'t [Token], pointers: u8, array: bool, line: usize },
    /// `enum NAME { ... }`, `enum class NAME : T { ... }`: the underlying type's tokens, if given,
    /// and the enumerators (the body, whose values set a plain enum's size).
    Enum { underlying: Option<&'t [Token]>, body: &'t [Token], line: usize },
    /// `struct NAME { BODY }` (also `typedef struct { BODY } NAME;`), with its `__align__(N)` /
    /// `alignas(N)`; `keyword` is `struct`, `class` or `union`.
    Struct { body: &'t [Token], align: Result<Option<usize>, &'t Token>, line: usize, keyword: &'t str, base: bool },
}

impl Def<'_> {
    /// The line of the definition.
    pub(crate) fn line(&self) -> usize {
        match *self {
            Def::Alias { line, .. } | Def::Enum { line, .. } | Def::Struct { line, .. } => line,
        }
    }
}

/// `typedef struct P P;` (or `using P = P;`): an alias of a name to the type of that name.
fn is_self_alias(name: &str, def: &Def<'_>) -> bool {
    let Def::Alias { target, pointers: 0, array: false, .. } = def else { return false };
    let mut words = target
        .iter()
        .filter(|t| !matches!(t.ident(), Some("struct" | "class" | "union" | "enum" | "const" | "volatile")));
    matches!((words.next(), words.next()), (Some(t), None) if t.ident() == Some(name))
}

/// Whether two definitions define the same type (token for token; lines aside).
fn same_def(a: &Def<'_>, b: &Def<'_>) -> bool {
    let text = |toks: &[Token]| toks.iter().map(Token::text).collect::<Vec<_>>();
    let align = |a: &Result<Option<usize>, &Token>| a.as_ref().map(|a| *a).map_err(|t| t.text());
    match (a, b) {
        (
            Def::Alias { target: t1, pointers: p1, array: a1, .. },
            Def::Alias { target: t2, pointers: p2, array: a2, .. },
        ) => text(t1) == text(t2) && p1 == p2 && a1 == a2,
        (Def::Enum { underlying: u1, body: b1, .. }, Def::Enum { underlying: u2, body: b2, .. }) => {
            u1.map(text) == u2.map(text) && text(b1) == text(b2)
        }
        (
            Def::Struct { body: b1, align: l1, keyword: k1, base: s1, .. },
            Def::Struct { body: b2, align: l2, keyword: k2, base: s2, .. },
        ) => text(b1) == text(b2) && align(l1) == align(l2) && k1 == k2 && s1 == s2,
        _ => false,
    }
}

/// The types a file defines at file or namespace scope, by name, in order.
#[derive(Debug, Default)]
pub struct TypeEnv<'t> {
    defs: Vec<(&'t str, Def<'t>)>,
    /// The file has a `#pragma pack` (which the lexer drops): struct layouts are not read.
    pub(crate) packed: bool,
    /// Object-like and function-like `#define`s: name and line.
    defines: Vec<(&'t str, usize)>,
}

impl<'t> TypeEnv<'t> {
    /// Reads the definitions in `toks`; `src` is the text, for what the lexer drops.
    pub fn new(src: &'t str, toks: &'t [Token]) -> TypeEnv<'t> {
        let defines = src
            .lines()
            .enumerate()
            .filter_map(|(k, line)| {
                let rest = line.trim_start().strip_prefix('#')?.trim_start().strip_prefix("define")?;
                let name = rest.trim_start().split(|c: char| !(c == '_' || c.is_ascii_alphanumeric())).next()?;
                (!name.is_empty()).then_some((name, k + 1))
            })
            .collect();
        let mut env = TypeEnv { defs: Vec::new(), packed: uses_pragma_pack(src, toks), defines };
        env.scan(toks);
        env
    }

    /// The line of a `#define name`, if the file has one.
    pub(crate) fn define(&self, name: &str) -> Option<usize> {
        self.defines.iter().find(|(n, _)| *n == name).map(|(_, line)| *line)
    }

    /// The definition of `name`, if the file has one (the last one wins, as a complete
    /// definition follows forward declarations).
    pub(crate) fn def(&self, name: &str) -> Option<Def<'t>> {
        self.defs.iter().rev().find(|(n, d)| *n == name && !is_self_alias(name, d)).map(|(_, d)| *d)
    }

    /// The lines of two definitions of `name` that differ, if the file has such: a name defined
    /// in two namespaces (or struct scopes, or `#if` branches of an unpreprocessed file), which
    /// kgraph, reading names without C++'s scopes, cannot tell apart. Repeats of one definition
    /// and `typedef struct P P;` are no conflict.
    pub(crate) fn conflict(&self, name: &str) -> Option<(usize, usize)> {
        let defs: Vec<&Def<'t>> =
            self.defs.iter().filter(|(n, d)| *n == name && !is_self_alias(name, d)).map(|(_, d)| d).collect();
        let last = defs.last()?;
        defs.iter().find(|d| !same_def(d, last)).map(|d| (d.line(), last.line()))
    }

    fn scan(&mut self, toks: &'t [Token]) {
        let mut seg_start = 0;
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            if t.is_punct(";") {
                self.simple_decl(&toks[seg_start..i]);
                seg_start = i + 1;
            } else if t.is_punct("}") {
                seg_start = i + 1;
            } else if t.is_punct("{") {
                let seg = &toks[seg_start..i];
                let extern_c = seg.len() == 2
                    && seg[0].ident() == Some("extern")
                    && matches!(&seg[1].tok, Tok::Str(s) if s == "C");
                if extern_c || seg.iter().any(|t| t.ident() == Some("namespace")) {
                    seg_start = i + 1;
                } else {
                    let close = matching(toks, i, "{", "}");
                    let body = toks.get(i + 1..close).unwrap_or(&[]);
                    let end = self.braced_decl(seg, body, toks.get(close + 1..).unwrap_or(&[]));
                    i = close + end;
                    seg_start = i + 1;
                }
            }
            i += 1;
        }
    }

    /// `typedef T NAME;`, `using NAME = T;` (`seg` without its `;`).
    fn simple_decl(&mut self, seg: &'t [Token]) {
        if seg.iter().any(|t| t.is_punct("(")) && !seg.iter().any(is_align_word) {
            return;
        }
        match seg.first().and_then(Token::ident) {
            Some("typedef") => self.typedef(&seg[1..], None),
            Some("using") if seg.len() >= 4 && seg[2].is_punct("=") => {
                if let Some(name) = seg[1].ident() {
                    let target = &seg[3..];
                    self.defs.push((name, Def::Alias { target, pointers: 0, array: false, line: seg[1].line }));
                }
            }
            _ => {}
        }
    }

    /// The aliases of `typedef TYPE d1, d2;` (`rest` after `typedef`); with `def`, the type is a
    /// braced definition given its names here (`typedef struct { .. } NAME;`).
    fn typedef(&mut self, rest: &'t [Token], def: Option<Def<'t>>) {
        let declarators = split_top(rest, ",");
        let Some(first) = declarators.first() else { return };
        // The target type is everything of the first declarator before its name.
        let name_at = first.iter().rposition(|t| t.ident().is_some() && !is_qualifier(t));
        let Some(name_at) = name_at else { return };
        let type_end = first[..name_at].iter().position(|t| t.is_punct("*")).unwrap_or(name_at);
        let target = &first[..type_end];
        for decl in declarators {
            let Some(k) = decl.iter().rposition(|t| t.ident().is_some() && !is_qualifier(t)) else { continue };
            let Some(name) = decl[k].ident() else { continue };
            let pointers = decl.iter().filter(|t| t.is_punct("*")).count() as u8;
            let array = decl.iter().any(|t| t.is_punct("["));
            match def {
                Some(d) if pointers == 0 && !array => self.defs.push((name, d)),
                _ => self.defs.push((name, Def::Alias { target, pointers, array, line: decl[k].line })),
            }
        }
    }

    /// A definition with braces: `struct X { .. };`, `typedef struct { .. } X;`, `enum E : T { .. };`.
    /// Returns how many tokens after the closing brace it consumed (a typedef's names).
    fn braced_decl(&mut self, seg: &'t [Token], body: &'t [Token], after: &'t [Token]) -> usize {
        let typedef = seg.first().and_then(Token::ident) == Some("typedef");
        let head = if typedef { &seg[1..] } else { seg };
        let Some(k) = head.iter().position(|t| matches!(t.ident(), Some("struct" | "class" | "union" | "enum"))) else {
            return 0;
        };
        if head[..k].iter().any(|t| t.ident() == Some("template")) {
            return 0;
        }
        // `struct Foo make() { ... }` is a function returning a struct, not a definition (an
        // `aligned(16)` inside a `[[...]]` attribute is no call).
        let plain = without_bracket_attributes(head);
        let call = plain.windows(2).any(|w| w[1].is_punct("(") && w[0].ident().is_some() && !is_align_word(w[0]));
        if call {
            return 0;
        }
        let keyword = head[k].ident().unwrap_or("struct");
        let rest = &head[k + 1..];
        let line = head[k].line;
        let (def, tag) = if keyword == "enum" {
            let rest = match rest.first().and_then(Token::ident) {
                Some("class" | "struct") => &rest[1..],
                _ => rest,
            };
            let tag = rest.first().and_then(Token::ident);
            let colon = rest.iter().position(|t| t.is_punct(":"));
            let underlying = colon.map(|c| &rest[c + 1..]);
            (Def::Enum { underlying, body, line }, tag.filter(|_| colon != Some(0)))
        } else {
            let (align, tag, base) = struct_head(rest);
            // Attributes between the closing brace and the `;` or the typedef's names apply to
            // the type too (`struct S { .. } __attribute__((aligned(16)));`): nvcc lays the
            // struct out with them, so they count as the head's do.
            let align = max_align(align, trailing_align(after));
            (Def::Struct { body, align, line, keyword, base }, tag)
        };
        if let Some(tag) = tag {
            self.defs.push((tag, def));
        }
        if !typedef {
            return 0;
        }
        let end = after.iter().position(|t| t.is_punct(";")).unwrap_or(after.len());
        self.typedef_names(&after[..end], def);
        end
    }

    /// The names after `typedef struct { .. }`: `NAME`, `NAME, *PNAME`.
    fn typedef_names(&mut self, names: &'t [Token], def: Def<'t>) {
        for decl in split_top(names, ",") {
            let Some(name) = decl.iter().rev().find_map(Token::ident) else { continue };
            if decl.iter().any(|t| t.is_punct("*") || t.is_punct("[")) {
                continue;
            }
            self.defs.push((name, def));
        }
    }
}

/// Whether the file packs structs with a pragma: a `#pragma pack` line however spaced
/// (`#  pragma\tpack(1)`), or the operator forms the lexer keeps as tokens
/// (`_Pragma("pack(1)")`, `__pragma(pack(1))`).
fn uses_pragma_pack(src: &str, toks: &[Token]) -> bool {
    let directive = src.lines().any(|line| {
        let Some(rest) = line.trim_start().strip_prefix('#') else { return false };
        let Some(rest) = rest.trim_start().strip_prefix("pragma") else { return false };
        rest.starts_with(char::is_whitespace) && rest.trim_start().starts_with("pack")
    });
    let operator = toks.windows(3).any(|w| {
        matches!(w[0].ident(), Some("_Pragma" | "__pragma"))
            && w[1].is_punct("(")
            && match &w[2].tok {
                Tok::Str(s) => s.trim_start().starts_with("pack"),
                _ => w[2].ident() == Some("pack"),
            }
    });
    directive || operator
}

/// After `struct`: attributes, then the tag, then `: base` (inheritance) or nothing.
fn struct_head(rest: &[Token]) -> (Result<Option<usize>, &Token>, Option<&str>, bool) {
    let mut align: Result<Option<usize>, &Token> = Ok(None);
    let mut tag = None;
    let mut k = 0;
    while k < rest.len() {
        let t = &rest[k];
        if t.is_punct("[") && rest.get(k + 1).is_some_and(|n| n.is_punct("[")) {
            let close = matching(rest, k, "[", "]");
            align = max_align(align, bracket_attribute_align(&rest[k..=close]));
            k = close + 1;
            continue;
        }
        if rest.get(k + 1).is_some_and(|n| n.is_punct("(")) && t.ident().is_some() {
            let close = matching(rest, k + 1, "(", ")");
            align = max_align(align, attribute_align(&rest[k..=close]));
            k = close + 1;
            continue;
        }
        if t.is_punct(":") {
            return (align, tag, true);
        }
        if let Some(w) = t.ident() {
            if !matches!(w, "final") {
                tag = Some(w);
            }
        }
        k += 1;
    }
    (align, tag, false)
}

/// The larger of two alignments read from attributes; the first unreadable one wins.
fn max_align<'a>(
    a: Result<Option<usize>, &'a Token>,
    b: Result<Option<usize>, &'a Token>,
) -> Result<Option<usize>, &'a Token> {
    match (a, b) {
        (Err(e), _) | (_, Err(e)) => Err(e),
        (Ok(a), Ok(b)) => Ok(a.max(b)),
    }
}

/// The alignment the attributes right after a struct's closing brace ask for
/// (`} __attribute__((aligned(16)))`, `} [[gnu::packed]]`); `Err` at one kgraph cannot read
/// (`packed` among them).
fn trailing_align(after: &[Token]) -> Result<Option<usize>, &Token> {
    let mut align = Ok(None);
    let mut k = 0;
    while k < after.len() {
        let t = &after[k];
        if t.is_punct("[") && after.get(k + 1).is_some_and(|n| n.is_punct("[")) {
            let close = matching(after, k, "[", "]");
            align = max_align(align, bracket_attribute_align(&after[k..=close]));
            k = close + 1;
        } else if is_align_word(t) && after.get(k + 1).is_some_and(|n| n.is_punct("(")) {
            let close = matching(after, k + 1, "(", ")");
            align = max_align(align, attribute_align(&after[k..=close]));
            k = close + 1;
        } else {
            break;
        }
    }
    align
}

/// The alignment a C++11 attribute `[[...]]` asks for: `[[gnu::aligned(16)]]`; `Err` for
/// `packed` or an `aligned` without a literal; `Ok(None)` for the others (`[[nodiscard]]`).
fn bracket_attribute_align(attr: &[Token]) -> Result<Option<usize>, &Token> {
    let mut align = Ok(None);
    for (k, t) in attr.iter().enumerate() {
        match t.ident() {
            Some("packed" | "__packed__") => return Err(t),
            Some("aligned" | "__aligned__") => {
                let found = match (attr.get(k + 1), attr.get(k + 2), attr.get(k + 3)) {
                    (Some(open), Some(Token { tok: Tok::Literal(text), .. }), Some(close))
                        if open.is_punct("(") && close.is_punct(")") =>
                    {
                        parse_int(text).map(Some).ok_or(t)
                    }
                    _ => Err(t),
                };
                align = max_align(align, found);
            }
            _ => {}
        }
    }
    align
}

/// `toks` without its `[[...]]` attribute groups.
fn without_bracket_attributes(toks: &[Token]) -> Vec<&Token> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        if toks[k].is_punct("[") && toks.get(k + 1).is_some_and(|n| n.is_punct("[")) {
            k = matching(toks, k, "[", "]") + 1;
            continue;
        }
        out.push(&toks[k]);
        k += 1;
    }
    out
}

/// The alignment an attribute asks for: `__align__(16)`, `__builtin_align__(16)`,
/// `alignas(16)`, `__attribute__((aligned(16)))`, `__declspec(align(16))`; `Ok(None)` for an
/// attribute that sets none; `Err(token)` for an alignment kgraph cannot read (a macro, a type).
pub(crate) fn attribute_align(attr: &[Token]) -> Result<Option<usize>, &Token> {
    let Some(word) = attr.first().and_then(Token::ident) else { return Ok(None) };
    let arg_of = |k: usize| -> Result<Option<usize>, &Token> {
        // attr[k] is `(`; the number is attr[k + 1], then `)`.
        match (attr.get(k + 1), attr.get(k + 2)) {
            (Some(Token { tok: Tok::Literal(text), .. }), Some(close)) if close.is_punct(")") => {
                parse_int(text).map(Some).ok_or(&attr[k + 1])
            }
            (Some(t), _) => Err(t),
            (None, _) => Err(&attr[0]),
        }
    };
    match word {
        "__align__" | "__builtin_align__" | "alignas" | "_Alignas" => arg_of(1),
        "__attribute__" | "__declspec" => {
            match attr.iter().position(|t| matches!(t.ident(), Some("aligned" | "align" | "__aligned__"))) {
                Some(k) if attr.get(k + 1).is_some_and(|t| t.is_punct("(")) => arg_of(k + 1),
                Some(k) => Err(&attr[k]),
                None if attr.iter().any(|t| matches!(t.ident(), Some("packed" | "__packed__"))) => Err(&attr[0]),
                None => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

/// An integer literal's value (`16`, `0x10`, `16u`).
pub(crate) fn parse_int(text: &str) -> Option<usize> {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']).replace('\'', "");
    match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => usize::from_str_radix(hex, 16).ok(),
        None => digits.parse().ok(),
    }
}

fn is_align_word(t: &Token) -> bool {
    matches!(t.ident(), Some("__align__" | "__builtin_align__" | "alignas" | "__attribute__" | "__declspec"))
}

fn is_qualifier(t: &Token) -> bool {
    matches!(t.ident(), Some("const" | "volatile" | "__restrict__" | "__restrict" | "restrict"))
}

/// `toks` split at top-level `sep` (outside `()`, `[]`, `{}`, `<>`).
pub(crate) fn split_top<'t>(toks: &'t [Token], sep: &str) -> Vec<&'t [Token]> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (k, t) in toks.iter().enumerate() {
        if t.is_punct("(") || t.is_punct("[") || t.is_punct("{") || t.is_punct("<") {
            depth += 1;
        } else if t.is_punct(")") || t.is_punct("]") || t.is_punct("}") || t.is_punct(">") {
            depth -= 1;
        } else if depth == 0 && t.is_punct(sep) {
            parts.push(&toks[start..k]);
            start = k + 1;
        }
    }
    if start < toks.len() {
        parts.push(&toks[start..]);
    }
    parts
}

/// Index of the token closing the group opened at `open` (or the last index when unclosed).
pub(crate) fn matching(toks: &[Token], open: usize, left: &str, right: &str) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.is_punct(left) {
            depth += 1;
        } else if t.is_punct(right) {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    toks.len().saturating_sub(1).max(open)
}

/// Tokens as text, for messages.
pub(crate) fn text_of(toks: &[Token]) -> String {
    toks.iter().map(Token::text).collect::<Vec<_>>().join(" ")
}
