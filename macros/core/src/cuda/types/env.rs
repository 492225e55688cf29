//! The types a `.cu` file defines itself ([`TypeEnv`]): `typedef` and `using` aliases, `enum`s
//! and `struct`s at file or namespace scope, by name, with the file's `#define`s and whether it
//! packs structs with a pragma.

use super::attributes::{is_align_word, max_align, struct_head, trailing_align, without_bracket_attributes};
use super::tokens::{matching, split_top};
use crate::cuda::lex::{Tok, Token};

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
    /// The file has a `#pragma pack` (the lexer keeps its operator form): struct layouts are not read.
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

fn is_qualifier(t: &Token) -> bool {
    matches!(t.ident(), Some("const" | "volatile" | "__restrict__" | "__restrict" | "restrict"))
}
