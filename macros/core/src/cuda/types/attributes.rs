//! The alignment a struct's attributes ask for: `__align__(N)`, `alignas(N)`,
//! `__attribute__((aligned(N)))`, `[[gnu::aligned(N)]]` and the like, before its tag or after its
//! closing brace, with `Err` at one kgraph cannot read (`packed` among them); and integer literals.

use super::tokens::matching;
use crate::cuda::lex::{Tok, Token};

/// After `struct`: attributes, then the tag, then `: base` (inheritance) or nothing.
pub(super) fn struct_head(rest: &[Token]) -> (Result<Option<usize>, &Token>, Option<&str>, bool) {
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
pub(super) fn max_align<'a>(
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
pub(super) fn trailing_align(after: &[Token]) -> Result<Option<usize>, &Token> {
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
pub(super) fn without_bracket_attributes(toks: &[Token]) -> Vec<&Token> {
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

pub(super) fn is_align_word(t: &Token) -> bool {
    matches!(t.ident(), Some("__align__" | "__builtin_align__" | "alignas" | "__attribute__" | "__declspec"))
}
