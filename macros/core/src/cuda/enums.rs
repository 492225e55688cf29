//! The enumerators of a `.cu` file with their values, so an enum template argument can be
//! named as C++ names it (`combine<Mode::Max>`) although the mangled symbol holds only its
//! value (`combine<(Mode)1>`). Read: `enum`, `enum class`/`struct`, an underlying type, in
//! namespaces; values counted from 0 or from an integer literal (`= 4`, `= -1`, `= 0x10`). An
//! enumerator set by any other expression, and those after it, are not known (not resolved).

use super::lex::{Tok, Token};

/// One enumerator: `ops::Reduce::Sum` = 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enumerator {
    /// The enum's name with its namespaces (`ops::Reduce`).
    pub enum_name: String,
    /// The enumerator (`Sum`).
    pub name: String,
    pub value: i64,
    /// An `enum class` (`enum struct`): its enumerators are named only through the enum.
    pub scoped: bool,
}

impl Enumerator {
    /// The ways C++ names it: `ops::Reduce::Sum`, and `ops::Sum` for an unscoped enum (`Sum`
    /// for one at file scope, as C code names it).
    fn spellings(&self) -> Vec<String> {
        let mut names = vec![format!("{}::{}", self.enum_name, self.name)];
        if !self.scoped {
            match self.enum_name.rsplit_once("::") {
                Some((scope, _)) => names.push(format!("{scope}::{}", self.name)),
                None => names.push(self.name.clone()),
            }
        }
        names
    }
}

/// Every enumerator of known value in `toks`, in order.
pub fn enumerators(toks: &[Token]) -> Vec<Enumerator> {
    let mut out = Vec::new();
    // Each open brace: the namespace it opens, if any.
    let mut scopes: Vec<Option<String>> = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        if t.ident() == Some("namespace") {
            let name = toks.get(k + 1).and_then(Token::ident).map(str::to_string);
            let brace = k + if name.is_some() { 2 } else { 1 };
            if toks.get(brace).is_some_and(|b| b.is_punct("{")) {
                scopes.push(Some(name.unwrap_or_default()));
                k = brace + 1;
                continue;
            }
        } else if t.ident() == Some("enum") {
            if let Some((end, found)) = read_enum(toks, k + 1, &scopes) {
                out.extend(found);
                k = end;
                continue;
            }
        } else if t.is_punct("{") {
            scopes.push(None);
        } else if t.is_punct("}") {
            scopes.pop();
        }
        k += 1;
    }
    out
}

/// After `enum` at `start`: the enumerators of a definition and the index after its `}`;
/// `None` for an opaque declaration or something else.
fn read_enum(toks: &[Token], start: usize, scopes: &[Option<String>]) -> Option<(usize, Vec<Enumerator>)> {
    let mut k = start;
    let scoped = matches!(toks.get(k).and_then(Token::ident), Some("class" | "struct"));
    if scoped {
        k += 1;
    }
    let name = toks.get(k)?.ident()?.to_string();
    // The underlying type, up to the brace.
    while !toks.get(k)?.is_punct("{") {
        if toks[k].is_punct(";") {
            return None;
        }
        k += 1;
    }
    let mut qualified: Vec<&str> = scopes.iter().flatten().map(String::as_str).filter(|s| !s.is_empty()).collect();
    qualified.push(&name);
    let enum_name = qualified.join("::");
    let (mut found, mut next, mut known) = (Vec::new(), 0i64, true);
    k += 1;
    loop {
        let entry = k;
        while !toks.get(k)?.is_punct(",") && !toks[k].is_punct("}") {
            k += 1;
        }
        let part = &toks[entry..k];
        if let Some(enumerator) = part.first().and_then(Token::ident) {
            let value = match part.get(1) {
                None => known.then_some(next),
                Some(eq) if eq.is_punct("=") => literal(&part[2..]),
                Some(_) => None,
            };
            known = value.is_some();
            if let Some(value) = value {
                found.push(Enumerator { enum_name: enum_name.clone(), name: enumerator.to_string(), value, scoped });
                next = value.wrapping_add(1);
            }
        }
        if toks[k].is_punct("}") {
            return Some((k + 1, found));
        }
        k += 1;
    }
}

/// An integer literal, possibly negative (`4`, `-1`, `0x10`, `3u`).
fn literal(toks: &[Token]) -> Option<i64> {
    let (negative, rest) = match toks.first() {
        Some(t) if t.is_punct("-") => (true, &toks[1..]),
        _ => (false, toks),
    };
    let [Token { tok: Tok::Literal(text), .. }] = rest else { return None };
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    let value = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    Some(if negative { -value } else { value })
}

/// `(ops::Reduce)0` → `ops::Reduce::Sum` where `enumerators` names that value; the text
/// unchanged otherwise. For showing a demangled template argument.
pub fn enumerator_name(argument: &str, enumerators: &[Enumerator]) -> Option<String> {
    let (ty, value) = argument.strip_prefix('(')?.split_once(')')?;
    let value: i64 = value.parse().ok()?;
    let mut names = enumerators.iter().filter(|e| e.value == value && same_enum(&e.enum_name, ty));
    let first = names.next()?;
    // Two enumerators of one value (aliases): either names the argument; the first is shown.
    Some(format!("{}::{}", first.enum_name, first.name))
}

/// `ty` as the demangler shows it names the enum `enum_name` (namespaces may differ in how
/// much is written; the demangled name is the full one).
fn same_enum(enum_name: &str, ty: &str) -> bool {
    enum_name == ty || ty.ends_with(&format!("::{enum_name}")) || enum_name.ends_with(&format!("::{ty}"))
}

/// `name` with each enumerator written `Type::Name` (`combine<Mode::Max, ops::Reduce::Sum>`)
/// replaced by its value as the demangler shows it (`combine<(Mode)1, (ops::Reduce)0>`), so a
/// kernel named the C++ way finds its record entry.
pub fn enumerators_as_values(name: &str, enumerators: &[Enumerator]) -> String {
    let mut out = name.to_string();
    // Longest qualified spellings first, so `ops::Reduce::Sum` is not cut at `Reduce::Sum`.
    let mut spelled: Vec<(String, &Enumerator)> =
        enumerators.iter().flat_map(|e| e.spellings().into_iter().map(move |s| (s, e))).collect();
    spelled.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    for (spelling, e) in spelled {
        let shown = format!("({}){}", e.enum_name, e.value);
        out = replace_word(&out, &spelling, &shown);
    }
    out
}

/// `name` with each enumerator of an unscoped enum written by name (`kfunc<float, FILL>`)
/// replaced by its plain value (`kfunc<float, 0>`): how the symbol holds an enumerator given to
/// an `int` template parameter (`template <typename T, int FUNC>`), which C++ converts it to.
pub fn enumerators_as_ints(name: &str, enumerators: &[Enumerator]) -> String {
    let mut out = name.to_string();
    let mut spelled: Vec<(String, &Enumerator)> =
        enumerators.iter().filter(|e| !e.scoped).flat_map(|e| e.spellings().into_iter().map(move |s| (s, e))).collect();
    spelled.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    for (spelling, e) in spelled {
        out = replace_word(&out, &spelling, &e.value.to_string());
    }
    out
}

/// `text` with `from` replaced where it stands as whole words (not inside a longer name).
fn replace_word(text: &str, from: &str, to: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().last();
        let after = rest[at + from.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '(');
        out.push_str(&rest[..at]);
        out.push_str(if word(before) || word(after) { from } else { to });
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::lex::lex;

    #[test]
    fn values_namespaces_and_names() {
        let src = "enum class Mode : int { Add, Max };\nnamespace ops { enum Reduce { Sum = 2, Prod, Neg = -1 }; }\n\
                   enum Opaque : int;\nenum Weird { A = 1 << 2, B };";
        let e = enumerators(&lex(src));
        let shown: Vec<(String, String, i64)> =
            e.iter().map(|e| (e.enum_name.clone(), e.name.clone(), e.value)).collect();
        assert_eq!(
            shown,
            [
                ("Mode", "Add", 0),
                ("Mode", "Max", 1),
                ("ops::Reduce", "Sum", 2),
                ("ops::Reduce", "Prod", 3),
                ("ops::Reduce", "Neg", -1)
            ]
            .map(|(a, b, v)| (a.to_string(), b.to_string(), v))
            .to_vec(),
            "A and B are set by an expression: unknown"
        );
        assert_eq!(enumerator_name("(Mode)1", &e).as_deref(), Some("Mode::Max"));
        assert_eq!(enumerator_name("(ops::Reduce)3", &e).as_deref(), Some("ops::Reduce::Prod"));
        assert_eq!(enumerator_name("(Mode)7", &e), None);
        assert_eq!(enumerators_as_values("k<Mode::Max, ops::Reduce::Sum>", &e), "k<(Mode)1, (ops::Reduce)2>");
        assert_eq!(enumerators_as_values("k<XMode::Max>", &e), "k<XMode::Max>", "whole words only");
        assert_eq!(enumerators_as_values("k<ops::Prod>", &e), "k<(ops::Reduce)3>", "unscoped: through the namespace");
        assert_eq!(enumerators_as_values("k<Max>", &e), "k<Max>", "scoped: only through the enum");
        let c = enumerators(&lex("typedef enum Funcs_t { FILL = 0, ARANGE = 1, _MUL = 2 } Funcs_t;"));
        assert_eq!(enumerators_as_values("kfunc<float, _MUL>", &c), "kfunc<float, (Funcs_t)2>", "file scope: bare");
        assert_eq!(enumerators_as_ints("kfunc<float, FILL>", &c), "kfunc<float, 0>", "to an int parameter");
        assert_eq!(enumerators_as_ints("kfunc<float, Funcs_t::ARANGE>", &c), "kfunc<float, 1>");
        assert_eq!(
            enumerators_as_ints("k<Mode::Max, ops::Sum>", &e),
            "k<Mode::Max, 2>",
            "a scoped enum does not convert"
        );
    }
}
