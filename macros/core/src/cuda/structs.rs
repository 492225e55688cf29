//! The layout of a C struct a `.cu` file defines, computed with the C rules nvcc follows on
//! x86-64 / CUDA: each field at the next multiple of its alignment, the struct aligned to its
//! most aligned field (or its `__align__(N)` / `alignas(N)`, if larger), its size rounded up to
//! that alignment. `#[kernel]` checks a Rust twin against it at compile time.
//!
//! Read: fields of number, `bool`, half, vector, enum, typedef'd and pointer types, nested
//! structs the file defines, arrays with literal lengths (`float w[4]`, `int m[3][3]`), field
//! `alignas(N)`/`__align__(N)`, the struct's alignment attributes before its tag or after its
//! closing brace, default member initializers; member functions and `static` members are
//! skipped (they take no room). Refused, with the reason: bit-fields, unions, base classes,
//! virtual functions, inline nested definitions, array lengths that are not literals,
//! `#pragma pack` and `packed` attributes, function pointers and other parenthesised
//! declarators, fields of a type the struct defines inside itself, a name the file defines
//! twice differently (kgraph reads no scopes), plain enums whose values need more than an
//! `int`, and empty structs (C++ gives them one byte of padding no Rust twin can match soundly).

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
    if let Some(why) = conflict(env, name) {
        return Err(why);
    }
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
    let declared_align = align.map_err(|t| {
        format!(
            "{what}: cannot read the alignment attribute at `{}`: kgraph mirrors `aligned(N)` with a literal `N` \
             only, and refuses `packed` (fields off their alignment) and other layout attributes",
            t.text()
        )
    })?;
    // `S(int);` in the body of `S` (or of `typedef struct S {..} T;`) is a constructor.
    let is_own = |word: &str| {
        word == name || matches!(env.def(word), Some(Def::Struct { body: b, .. }) if std::ptr::eq(b, body))
    };
    let mut fields = Vec::new();
    let all = members(body, &is_own).map_err(|t| format!("{what}: cannot read the member at `{}`", t.text()))?;
    let local = local_type_names(&all);
    for member in all.into_iter().filter(|m| !takes_no_room(m, &is_own)) {
        fields.extend(fields_of(env, member, depth, &local).map_err(|why| format!("{what}: {why}"))?);
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

/// The member declarations of a struct body (without their `;`), less access labels and
/// member functions defined in the body; `Err` at an inline nested definition. `is_own` tells
/// the struct's own name (its constructors').
fn members<'t>(body: &'t [Token], is_own: &dyn Fn(&str) -> bool) -> Result<Vec<&'t [Token]>, &'t Token> {
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
            if is_function(seg, is_own) {
                // A member function's body: the declaration ends here. (Otherwise a brace
                // initializer: `float a{1}`, `alignas(16) float v{}`.)
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
    Ok(out)
}

/// A member that takes no room in the layout: a member function (a constructor of the struct
/// itself too), a `static`, a `typedef`/`using`, a `friend`, a template, a `static_assert`.
fn takes_no_room(member: &[Token], is_own: &dyn Fn(&str) -> bool) -> bool {
    // Keywords that only stand in such declarations, wherever they are among the specifiers
    // (`inline static constexpr int N = 4;`, `__attribute__((unused)) static float s;`).
    let no_room = ["static", "typedef", "using", "friend", "template", "constexpr", "static_assert"];
    if declarator_part(member).iter().any(|t| t.ident().is_some_and(|w| no_room.contains(&w))) {
        return true;
    }
    is_function(member, is_own)
}

/// Words that may stand before a declarator without being its type's name or the function's.
const SPECIFIERS: [&str; 17] = [
    "const",
    "volatile",
    "inline",
    "virtual",
    "explicit",
    "constexpr",
    "consteval",
    "mutable",
    "struct",
    "class",
    "union",
    "enum",
    "__host__",
    "__device__",
    "__forceinline__",
    "__noinline__",
    "__inline__",
];

/// Whether a member declaration (or the part of one before a `{`) declares a function: its
/// first `(`, attributes and any default member initializer (`= float(1)`) aside, opens a
/// parameter list after the function's name. Not a function, so a field kgraph must lay out
/// (or refuse): `void (*cb)(int)`, `float (*rows)[4]` (pointer declarators), `decltype(x) y`,
/// `Inner (x)` and `float (x)` (parenthesised declarators).
fn is_function(member: &[Token], is_own: &dyn Fn(&str) -> bool) -> bool {
    let toks = declarator_part(member);
    if toks.iter().any(|t| t.ident() == Some("operator")) {
        return true;
    }
    let Some(open) = toks.iter().position(|t| t.is_punct("(")) else { return false };
    if toks.get(open + 1).is_some_and(|t| t.is_punct("*") || t.is_punct("&") || t.is_punct("^")) {
        return false;
    }
    let before = &toks[..open];
    let Some(name) = before.last().and_then(|t| t.ident()) else { return false };
    // `ns::Inner (x)`: a qualified name before the `(` is a type's (a member function's name
    // is unqualified in its class).
    if before.len() >= 2 && before[before.len() - 2].is_punct("::") {
        return false;
    }
    let words: Vec<&&Token> =
        before.iter().filter(|t| !t.is_punct("~") && !t.ident().is_some_and(|w| SPECIFIERS.contains(&w))).collect();
    match words.len() {
        // `S(int)`, `~S()`: a constructor or destructor of this struct; `Inner (x)`: a field.
        1 => is_own(name),
        _ => !is_type_word(name) && !matches!(name, "decltype" | "typeof" | "__typeof__" | "__typeof" | "_Atomic"),
    }
}

/// The index of the `)` closing the attribute (`alignas(..)`, `__align__(..)`,
/// `__attribute__((..))`, `__declspec(..)`) that starts at `member[k]`, if one does.
fn attribute_at(member: &[Token], k: usize) -> Option<usize> {
    let is_attr = matches!(
        member[k].ident(),
        Some("__align__" | "alignas" | "__builtin_align__" | "__attribute__" | "__declspec")
    );
    (is_attr && member.get(k + 1).is_some_and(|n| n.is_punct("("))).then(|| matching(member, k + 1, "(", ")"))
}

/// A member declaration without its attributes (`alignas(16)`, `__attribute__((..))`,
/// `[[..]]`) and cut at its default member initializer (a top-level `=` or `{`).
fn declarator_part(member: &[Token]) -> Vec<&Token> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < member.len() {
        let t = &member[k];
        if let Some(close) = attribute_at(member, k) {
            k = close + 1;
            continue;
        }
        if t.is_punct("[") && member.get(k + 1).is_some_and(|n| n.is_punct("[")) {
            k = matching(member, k, "[", "]") + 1;
            continue;
        }
        if t.is_punct("=") || t.is_punct("{") {
            break;
        }
        if t.is_punct("(") || t.is_punct("[") {
            let close = if t.is_punct("(") { matching(member, k, "(", ")") } else { matching(member, k, "[", "]") };
            out.extend(&member[k..=close]);
            k = close + 1;
            continue;
        }
        out.push(t);
        k += 1;
    }
    out
}

/// The names that member `typedef`s and `using`s of a struct define: a field of such a type
/// is looked up in the struct's scope, which kgraph does not read.
fn local_type_names(members: &[&[Token]]) -> Vec<String> {
    let mut out = Vec::new();
    for member in members {
        match member.first().and_then(Token::ident) {
            Some("typedef") => {
                for decl in split_top(&member[1..], ",") {
                    let end = decl.iter().position(|t| t.is_punct("[")).unwrap_or(decl.len());
                    if let Some(name) = decl[..end].iter().rev().find_map(Token::ident) {
                        out.push(name.to_string());
                    }
                }
            }
            Some("using") => {
                if let Some(name) = member.get(1).and_then(Token::ident) {
                    if member.get(2).is_some_and(|t| t.is_punct("=")) {
                        out.push(name.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Why `name` cannot be read: two different definitions of it in the file.
fn conflict(env: &TypeEnv<'_>, name: &str) -> Option<String> {
    let (first, last) = env.conflict(name)?;
    Some(format!(
        "`{name}` has two different definitions (at line {first} and at line {last}): kgraph reads type names without C++'s \
         scopes (namespaces, structs) or the preprocessor's `#if`, so it cannot tell which one the kernel uses; give \
         them different names"
    ))
}

type Field = (String, CFieldType, Vec<usize>, usize, String, usize);

/// The fields of one member declaration (`float a, b[4], *p;`).
fn fields_of(env: &TypeEnv<'_>, member: &[Token], depth: usize, local: &[String]) -> Result<Vec<Field>, String> {
    // What is left with a `(` (not an attribute's, not in a default initializer's value) is a
    // function pointer, a pointer to an array, a `decltype` or a parenthesised declarator: it
    // takes room that kgraph cannot size, so the struct is refused rather than laid out without it.
    if declarator_part(member).iter().any(|t| t.is_punct("(")) {
        return Err(format!(
            "the member `{}` is a function pointer, a pointer to an array, a `decltype` or a parenthesised \
             declarator, which kgraph does not lay out",
            text_of(member)
        ));
    }
    // Attributes first: they set an alignment and are otherwise skipped.
    let mut align = 1;
    let mut toks: Vec<&Token> = Vec::new();
    let mut k = 0;
    while k < member.len() {
        let t = &member[k];
        if let Some(close) = attribute_at(member, k) {
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
        let end = decl.iter().position(|t| t.is_punct("=") || t.is_punct("[") || t.is_punct("{")).unwrap_or(decl.len());
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
        if let Some(t) = type_toks.iter().find(|t| t.ident().is_some_and(|w| local.iter().any(|l| l == w))) {
            return Err(format!(
                "field `{name}` has the type `{}`, which the struct defines inside itself (a member `typedef` or \
                 `using`): kgraph reads types at file scope, where that name may mean another type; define it \
                 outside the struct",
                t.text()
            ));
        }
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
        // A typedef of a texture or surface object is spelled as the object type, so that the
        // raw-handle rule (`kernel/raw_handles.rs`, by name) sees it through the alias.
        let spelled = match handle_alias(env, type_toks) {
            Some(handle) if pointers == 0 => handle.to_string(),
            _ => spelled,
        };
        out.push((name, ty, dims, align, if pointers > 0 { format!("{spelled}*") } else { spelled }, line));
    }
    Ok(out)
}

/// CUDA's texture and surface object types: `unsigned long long` handles.
const HANDLE_TYPES: [&str; 4] = ["cudaTextureObject_t", "cudaSurfaceObject_t", "CUtexObject", "CUsurfObject"];

/// The texture or surface object type that `type_toks` names through the file's typedefs
/// (`typedef cudaTextureObject_t Tex;`), if any.
fn handle_alias(env: &TypeEnv<'_>, type_toks: &[Token]) -> Option<&'static str> {
    let mut toks = type_toks;
    for _ in 0..MAX_DEPTH {
        let mut words = toks.iter().filter(|t| !matches!(t.ident(), Some("const" | "volatile")));
        let (Some(word), None) = (words.next().and_then(Token::ident), words.next()) else { return None };
        if let Some(handle) = HANDLE_TYPES.iter().find(|h| **h == word) {
            return Some(handle);
        }
        match env.def(word)? {
            Def::Alias { target, pointers: 0, array: false, .. } => toks = target,
            _ => return None,
        }
    }
    None
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
    if let Some(why) = conflict(env, name) {
        return CuBase::Unreadable(why);
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
        Some(Def::Enum { underlying: None, body, line }) => match plain_enum_fits_int(body) {
            Ok(()) => CuBase::Elem(Elem::I32),
            Err(why) => CuBase::Unreadable(format!(
                "enum `{name}` (line {line}) has no fixed underlying type and {why}, so C++ may make it wider \
                 than an `int`; give it one (`enum {name} : int {{ .. }}`)"
            )),
        },
        Some(Def::Enum { underlying: Some(toks), line, .. }) => match type_of(env, toks, depth + 1) {
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

/// Whether the enumerators of a plain `enum` (no fixed underlying type: C++ picks an integer
/// type that holds every value, `int` unless one does not fit) all fit a 4-byte `int` or
/// `unsigned int`; otherwise why kgraph cannot tell. An enumerator set by an expression is
/// accepted when the expression is built from `int` literals, earlier enumerators and
/// operators only (its value is then an `int`: a wider one would not compile).
fn plain_enum_fits_int(body: &[Token]) -> Result<(), String> {
    let (mut next, mut known) = (0i128, true);
    let (mut min, mut max) = (0i128, 0i128);
    let mut names: Vec<&str> = Vec::new();
    // Split at commas outside parentheses (not at `<`: `1 << 4, B` is two enumerators).
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (k, t) in body.iter().enumerate() {
        if t.is_punct("(") || t.is_punct("[") || t.is_punct("{") {
            depth += 1;
        } else if t.is_punct(")") || t.is_punct("]") || t.is_punct("}") {
            depth -= 1;
        } else if depth == 0 && t.is_punct(",") {
            parts.push(&body[start..k]);
            start = k + 1;
        }
    }
    parts.push(&body[start..]);
    for part in parts {
        let Some(first) = part.first() else { continue };
        let Some(name) = first.ident() else { return Err(format!("its enumerator `{}` is unreadable", text_of(part))) };
        let value = match part.get(1) {
            None => known.then_some(next),
            Some(eq) if eq.is_punct("=") => {
                let init = &part[2..];
                match int_literal(init) {
                    Some(v) => Some(v),
                    None if int_expression(init, &names) => None,
                    None => return Err(format!("its enumerator `{name}` is set by `{}`", text_of(init))),
                }
            }
            Some(t) => return Err(format!("its enumerator `{name}` is unreadable at `{}`", t.text())),
        };
        known = value.is_some();
        if let Some(v) = value {
            (min, max) = (min.min(v), max.max(v));
            next = v + 1;
        } else {
            // An `int` expression: anywhere in `int`'s range.
            (min, max) = (min.min(i32::MIN.into()), max.max(i32::MAX.into()));
        }
        names.push(name);
    }
    let fits = (min >= i32::MIN.into() && max <= i32::MAX.into()) || (min >= 0 && max <= u32::MAX.into());
    if fits {
        Ok(())
    } else {
        Err(format!("its values run from {min} to {max}"))
    }
}

/// An integer literal, possibly negated (`4`, `-1`, `0x10`, `3u`), as a number; `None` for a
/// literal with a `l`/`L` suffix (a `long`: 8 bytes) or anything else.
fn int_literal(toks: &[Token]) -> Option<i128> {
    let (negative, rest) = match toks.first() {
        Some(t) if t.is_punct("-") => (true, &toks[1..]),
        _ => (false, toks),
    };
    let [Token { tok: super::lex::Tok::Literal(text), .. }] = rest else { return None };
    if text.contains(['l', 'L']) {
        return None;
    }
    let value = parse_int(text)? as i128;
    Some(if negative { -value } else { value })
}

/// An expression of `int` literals (no suffix, within `int`), the enum's earlier enumerators
/// and arithmetic operators: its value is an `int`.
fn int_expression(toks: &[Token], names: &[&str]) -> bool {
    !toks.is_empty()
        && toks.iter().all(|t| match &t.tok {
            super::lex::Tok::Literal(text) => {
                text.chars().all(|c| c.is_ascii_hexdigit() || c == 'x' || c == 'X')
                    && parse_int(text).is_some_and(|v| v <= i32::MAX as usize)
            }
            super::lex::Tok::Punct(p) => {
                matches!(p.as_str(), "(" | ")" | "+" | "-" | "*" | "/" | "%" | "|" | "&" | "^" | "~" | "<" | ">")
            }
            super::lex::Tok::Ident(w) => names.contains(&w.as_str()),
            _ => false,
        })
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
