//! The layout of a C struct a `.cu` file defines, computed with the C rules nvcc follows on
//! x86-64 / CUDA: each field at the next multiple of its alignment, the struct aligned to its
//! most aligned field (or its `__align__(N)` / `alignas(N)`, if larger), its size rounded up to
//! that alignment. `#[kernel]` checks a Rust twin against it at compile time.
//!
//! Read: fields of number, `bool`, half, vector, enum, typedef'd and pointer types, nested
//! structs the file defines, arrays with literal lengths (`float w[4]`, `int m[3][3]`), field
//! `alignas(N)`/`__align__(N)`; member functions and `static` members are skipped (they take
//! no room). Refused, with the reason: bit-fields, unions, base classes, virtual functions,
//! inline nested definitions, array lengths that are not literals, `#pragma pack`, and empty
//! structs (C++ gives them one byte of padding no Rust twin can match soundly).

use super::lex::Token;
use super::types::{
    attribute_align, builtin, is_type_word, matching, parse_int, split_top, text_of, word_type, CField, CFieldType,
    CStruct, CuBase, Def, TypeEnv,
};
use crate::syntax::model::Elem;

fn align_up(n: usize, align: usize) -> usize {
    n.div_ceil(align.max(1)) * align.max(1)
}

/// The layout of struct `name` as the file defines it, or why kgraph cannot read it.
pub(crate) fn layout(env: &TypeEnv<'_>, name: &str, depth: usize) -> Result<CStruct, String> {
    let Some(Def::Struct { body, align, line, keyword, base }) = env.def(name) else {
        return Err(format!("`{name}` is not a struct the file defines"));
    };
    let what = format!("struct `{name}` (line {line})");
    if keyword == "union" {
        return Err(format!("`{name}` (line {line}) is a union: kgraph passes structs only"));
    }
    if base {
        return Err(format!("{what} has a base class: kgraph lays out plain structs only"));
    }
    if body.iter().any(|t| t.ident() == Some("virtual")) {
        return Err(format!("{what} has virtual functions (a vtable pointer kgraph does not lay out)"));
    }
    if env.packed {
        return Err(format!(
            "{what}: the file uses `#pragma pack`, which changes struct layouts in ways kgraph does not read"
        ));
    }
    let declared_align = align.map_err(|t| format!("{what}: cannot read the alignment at `{}`", t.text()))?;
    let mut fields = Vec::new();
    for member in members(body).map_err(|t| format!("{what}: cannot read the member at `{}`", t.text()))? {
        fields.extend(fields_of(env, member, depth).map_err(|why| format!("{what}: {why}"))?);
    }
    if fields.is_empty() {
        return Err(format!(
            "{what} has no fields: C++ makes an empty struct 1 byte, C 0, and a Rust twin can match neither \
             soundly; drop the parameter or give the struct a field"
        ));
    }
    let mut offset = 0;
    let mut struct_align = declared_align.unwrap_or(1);
    let mut laid = Vec::new();
    for (name, ty, dims, field_align, spelled, line) in fields {
        let (elem_size, natural) = ty.size_align();
        let align = natural.max(field_align);
        let count: usize = dims.iter().product();
        let at = align_up(offset, align);
        let size = elem_size * count;
        offset = at + size;
        struct_align = struct_align.max(align);
        laid.push(CField { name, ty, dims, offset: at, size, align, spelled, line });
    }
    Ok(CStruct {
        name: name.to_string(),
        line,
        size: align_up(offset, struct_align),
        align: struct_align,
        fields: laid,
    })
}

/// The member declarations of a struct body (without their `;`), less member functions and
/// access labels; `Err` at an inline nested definition.
fn members(body: &[Token]) -> Result<Vec<&[Token]>, &Token> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut k = 0;
    while k < body.len() {
        let t = &body[k];
        // `public:`, `private:`, `protected:`.
        if k == start
            && matches!(t.ident(), Some("public" | "private" | "protected"))
            && body.get(k + 1).is_some_and(|n| n.is_punct(":"))
        {
            k += 2;
            start = k;
            continue;
        }
        if t.is_punct("(") {
            k = matching(body, k, "(", ")") + 1;
            continue;
        }
        if t.is_punct("{") {
            let seg = &body[start..k];
            if seg.iter().any(|t| matches!(t.ident(), Some("struct" | "union" | "class" | "enum"))) {
                return Err(t);
            }
            let close = matching(body, k, "{", "}");
            if seg.iter().any(|t| t.is_punct("(")) {
                // A member function's body: the declaration ends here.
                start = close + 1;
            }
            k = close + 1;
            continue;
        }
        if t.is_punct(";") {
            if k > start {
                out.push(&body[start..k]);
            }
            start = k + 1;
        }
        k += 1;
    }
    if start < body.len() {
        return Err(&body[start]);
    }
    Ok(out.into_iter().filter(|m| !is_function_or_static(m)).collect())
}

/// A member that takes no room in the layout: a function, a `static`, a `typedef`/`using`,
/// a `friend`, a template.
fn is_function_or_static(member: &[Token]) -> bool {
    let first = member.first().and_then(Token::ident);
    if matches!(first, Some("static" | "typedef" | "using" | "friend" | "template" | "constexpr")) {
        return true;
    }
    // A `(` that is not an alignment attribute's: a function or constructor.
    member.iter().enumerate().any(|(k, t)| {
        t.is_punct("(")
            && !matches!(
                k.checked_sub(1).and_then(|j| member[j].ident()),
                Some("__align__" | "alignas" | "__builtin_align__" | "__attribute__" | "__declspec" | "aligned")
            )
            && !member[..k].iter().any(|t| t.ident() == Some("__attribute__"))
    })
}

type Field = (String, CFieldType, Vec<usize>, usize, String, usize);

/// The fields of one member declaration (`float a, b[4], *p;`).
fn fields_of(env: &TypeEnv<'_>, member: &[Token], depth: usize) -> Result<Vec<Field>, String> {
    // Attributes first: they set an alignment and are otherwise skipped.
    let mut align = 1;
    let mut toks: Vec<&Token> = Vec::new();
    let mut k = 0;
    while k < member.len() {
        let t = &member[k];
        let is_attr =
            matches!(t.ident(), Some("__align__" | "alignas" | "__builtin_align__" | "__attribute__" | "__declspec"));
        if is_attr && member.get(k + 1).is_some_and(|n| n.is_punct("(")) {
            let close = matching(member, k + 1, "(", ")");
            match attribute_align(&member[k..=close]) {
                Ok(a) => align = align.max(a.unwrap_or(1)),
                Err(t) => return Err(format!("cannot read the alignment at `{}`", t.text())),
            }
            k = close + 1;
            continue;
        }
        toks.push(t);
        k += 1;
    }
    let owned: Vec<Token> = toks.into_iter().cloned().collect();
    // A default member initializer takes no room: drop `= value`.
    let mut out = Vec::new();
    let declarators = split_top(&owned, ",");
    let Some(first) = declarators.first() else { return Ok(out) };
    let name_at = |decl: &[Token]| {
        let end = decl.iter().position(|t| t.is_punct("=") || t.is_punct("[")).unwrap_or(decl.len());
        decl[..end].iter().rposition(|t| t.ident().is_some())
    };
    let Some(first_name) = name_at(first) else {
        return Err(format!("cannot read the member `{}`", text_of(first)));
    };
    let type_end = first[..first_name].iter().position(|t| t.is_punct("*")).unwrap_or(first_name);
    let type_toks = &first[..type_end];
    if owned.iter().any(|t| t.is_punct(":")) && !owned.iter().any(|t| t.is_punct("::")) {
        return Err(format!("`{}` is a bit-field: kgraph cannot pass bit-fields", text_of(first)));
    }
    for (index, decl) in declarators.iter().enumerate() {
        let Some(at) = name_at(decl) else { return Err(format!("cannot read the member `{}`", text_of(decl))) };
        let name = decl[at].ident().unwrap_or_default().to_string();
        let line = decl[at].line;
        let stars = if index == 0 { &decl[type_end..at] } else { &decl[..at] };
        let pointers = stars.iter().filter(|t| t.is_punct("*")).count();
        if stars.iter().any(|t| t.is_punct("&")) {
            return Err(format!("field `{name}` is a reference"));
        }
        let dims = dims_of(&decl[at + 1..]).map_err(|t| {
            format!("field `{name}`: the array length `{}` is not a number kgraph can read (a literal)", t.text())
        })?;
        let spelled = text_of(type_toks);
        let ty = if pointers > 0 {
            CFieldType::Pointer
        } else {
            match type_of(env, type_toks, depth) {
                // A struct twin is `Pod` (a download may hand back any byte in any field), and
                // the kernel's `bool` must be 0 or 1: no Rust field type can be both.
                Ok(CuBase::Elem(Elem::Bool)) => {
                    return Err(format!(
                        "field `{name}` is a C `bool` (line {line}): a struct kgraph passes is `Pod`, so its Rust twin's \
                         field could hold any byte where the kernel reads a `bool` (only 0 and 1 are); declare the field \
                         `unsigned char` (`u8`) and test it `!= 0` in the kernel, or pass the flag as a `bool` parameter"
                    ))
                }
                Ok(CuBase::Elem(e)) => CFieldType::Elem(e),
                Ok(CuBase::Struct(s)) => CFieldType::Struct(s),
                Ok(CuBase::Unreadable(why)) => return Err(format!("field `{name}`: {why}")),
                Ok(CuBase::Unknown) => {
                    return Err(format!(
                        "field `{name}` has the type `{spelled}`, which the file does not define (kgraph reads struct, \
                         enum and typedef definitions from the `.cu` itself)"
                    ))
                }
                Ok(CuBase::Void | CuBase::Other) => {
                    return Err(format!("field `{name}` has the type `{spelled}`, which kgraph has no Rust type for"))
                }
                Err(t) => return Err(format!("field `{name}`: cannot read its type at `{}`", t.text())),
            }
        };
        out.push((name, ty, dims, align, if pointers > 0 { format!("{spelled}*") } else { spelled }, line));
    }
    Ok(out)
}

/// `[4][3]` after a field name (then possibly `= init`).
fn dims_of(rest: &[Token]) -> Result<Vec<usize>, &Token> {
    let mut dims = Vec::new();
    let mut k = 0;
    while k < rest.len() && rest[k].is_punct("[") {
        let close = matching(rest, k, "[", "]");
        match &rest[k + 1..close] {
            [t] => match &t.tok {
                super::lex::Tok::Literal(text) => dims.push(parse_int(text).ok_or(t)?),
                _ => return Err(t),
            },
            [] => return Err(&rest[k]),
            [t, ..] => return Err(t),
        }
        k = close + 1;
    }
    match rest.get(k) {
        None => Ok(dims),
        Some(t) if t.is_punct("=") || t.is_punct("{") => Ok(dims),
        Some(t) => Err(t),
    }
}

/// How deep aliases and nested structs may refer to each other before kgraph stops (a cycle).
const MAX_DEPTH: usize = 32;

/// The base type a type name stands for: built-in, else the file's alias, enum or struct;
/// [`CuBase::Unknown`] when the file does not define it.
pub(crate) fn resolve(env: &TypeEnv<'_>, name: &str, depth: usize) -> CuBase {
    if let Some(base) = builtin(name) {
        return base;
    }
    if depth > MAX_DEPTH {
        return CuBase::Unreadable(format!("`{name}` refers to itself through typedefs or fields"));
    }
    match env.def(name) {
        None => match env.define(name) {
            Some(line) => CuBase::Unreadable(format!(
                "`{name}` is a `#define` (line {line}): kgraph reads the `.cu` without the preprocessor, so spell \
                 the type out (or use a `typedef`)"
            )),
            None => CuBase::Unknown,
        },
        Some(Def::Alias { target, pointers, array, line }) => {
            if pointers > 0 || array {
                return CuBase::Unreadable(format!(
                    "`{name}` (line {line}) is a typedef of a pointer or array type: spell the parameter's type out \
                     (`{}*`)",
                    text_of(target)
                ));
            }
            match type_of(env, target, depth + 1) {
                Ok(base) => base,
                Err(t) => CuBase::Unreadable(format!(
                    "`{name}` (line {line}) is a typedef of `{}`, which kgraph cannot read (at `{}`)",
                    text_of(target),
                    t.text()
                )),
            }
        }
        Some(Def::Enum { underlying: None, .. }) => CuBase::Elem(Elem::I32),
        Some(Def::Enum { underlying: Some(toks), line }) => match type_of(env, toks, depth + 1) {
            Ok(CuBase::Elem(e)) if e.is_integer() => CuBase::Elem(e),
            _ => CuBase::Unreadable(format!(
                "enum `{name}` (line {line}) has the underlying type `{}`, which is not an integer type kgraph knows",
                text_of(toks)
            )),
        },
        Some(Def::Struct { .. }) => match layout(env, name, depth + 1) {
            Ok(s) => CuBase::Struct(Box::new(s)),
            Err(why) => CuBase::Unreadable(why),
        },
    }
}

/// The base type of a bare type (`unsigned int`, `const float`, `struct Params`, `dfloat`), or
/// the token kgraph cannot read.
pub(crate) fn type_of<'t>(env: &TypeEnv<'_>, toks: &'t [Token], depth: usize) -> Result<CuBase, &'t Token> {
    let Some(first) = toks.first() else { return Ok(CuBase::Unreadable("a declaration without a type".into())) };
    let mut words: Vec<&str> = Vec::new();
    let mut typename: Option<&str> = None;
    for t in toks {
        match t.ident() {
            Some("const" | "volatile" | "struct" | "class" | "enum" | "union" | "typename") => {}
            Some(w) if is_type_word(w) => words.push(w),
            Some(w) if typename.is_none() && words.is_empty() => typename = Some(w),
            _ if t.is_punct("::") => {}
            _ => return Err(t),
        }
    }
    match (typename, words.is_empty()) {
        (Some(name), true) => Ok(resolve(env, name, depth)),
        (None, false) => word_type(&words).ok_or(first),
        _ => Err(first),
    }
}
