//! The typed values of a spec's TOML, read with their spans: a [`Reader`] turns an integer, a
//! string, a number or expression, dimensions, a boolean, a table or a node argument into the
//! raw model, or pushes a diagnostic naming what was expected and what was found.

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::diagnostics::Ctxt;
use crate::graph::spec::diag::{list, suggest};
use crate::graph::spec::raw::{ArgValue, Lit, Num, Span, S};

pub(super) type Entry<'a, 'i> = (&'a Spanned<std::borrow::Cow<'i, str>>, &'a Spanned<DeValue<'i>>);

/// A table's entries in file order (the TOML map is sorted by key).
pub(super) fn entries<'a, 'i>(t: &'a DeTable<'i>) -> Vec<Entry<'a, 'i>> {
    let mut v: Vec<_> = t.iter().collect();
    v.sort_by_key(|(k, _)| k.span().start);
    v
}

pub(super) struct Reader<'t> {
    pub(super) text: &'t str,
    pub(super) diags: &'t mut Ctxt,
}

pub(super) fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

impl Reader<'_> {
    /// Where the characters of a string value start, when the written form has no escapes.
    fn str_start(&self, span: &Span, value: &str) -> Option<usize> {
        let raw = self.text.get(span.clone())?;
        let q = if raw.starts_with("\"\"\"") || raw.starts_with("'''") { 3 } else { 1 };
        (raw.len() >= 2 * q && &raw[q..raw.len() - q] == value).then_some(span.start + q)
    }

    pub(super) fn int(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<i128> {
        match v.get_ref() {
            DeValue::Integer(i) => match i128::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => Some(n),
                Err(_) => {
                    self.diags.push(v.span(), format!("{what}: integer out of range"));
                    None
                }
            },
            other => {
                self.diags.push(v.span(), format!("{what} must be an integer, found {}", type_name(other)));
                None
            }
        }
    }

    pub(super) fn string(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<S<String>> {
        match v.get_ref() {
            DeValue::String(s) => Some(S { v: s.to_string(), span: v.span() }),
            other => {
                self.diags.push(v.span(), format!("{what} must be a string, found {}", type_name(other)));
                None
            }
        }
    }

    pub(super) fn num(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<S<Num>> {
        match v.get_ref() {
            DeValue::String(s) => Some(S { v: Num::Expr(s.to_string(), self.str_start(&v.span(), s)), span: v.span() }),
            DeValue::Integer(_) => self.int(v, what).map(|n| S { v: Num::Int(n), span: v.span() }),
            other => {
                self.diags.push(
                    v.span(),
                    format!("{what} must be an integer or an expression string, found {}", type_name(other)),
                );
                None
            }
        }
    }

    pub(super) fn dims3(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<S<Vec<S<Num>>>> {
        if let DeValue::Array(items) = v.get_ref() {
            if items.is_empty() || items.len() > 3 {
                self.diags.push(v.span(), format!("{what} takes 1 to 3 dimensions [x, y, z], found {}", items.len()));
                return None;
            }
            let parts: Option<Vec<_>> = items.iter().map(|i| self.num(i, what)).collect();
            return parts.map(|p| S { v: p, span: v.span() });
        }
        self.num(v, what).map(|n| S { v: vec![n], span: v.span() })
    }

    pub(super) fn boolean(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<S<bool>> {
        match v.get_ref() {
            DeValue::Boolean(b) => Some(S { v: *b, span: v.span() }),
            other => {
                self.diags.push(
                    v.span(),
                    format!("{what} must be a boolean (`true` or `false`), found {}", type_name(other)),
                );
                None
            }
        }
    }

    pub(super) fn table<'a, 'i>(&mut self, v: &'a Spanned<DeValue<'i>>, what: &str) -> Option<&'a DeTable<'i>> {
        match v.get_ref() {
            DeValue::Table(t) => Some(t),
            other => {
                self.diags.push(v.span(), format!("{what} must be a table, found {}", type_name(other)));
                None
            }
        }
    }

    pub(super) fn unknown_key(&mut self, key: &Spanned<std::borrow::Cow<'_, str>>, place: &str, known: &[&str]) {
        self.diags.push(
            key.span(),
            format!(
                "unknown key `{}` in {place} (expected {}){}",
                key.get_ref(),
                list(known.iter().copied()),
                suggest(key.get_ref(), known.iter().copied())
            ),
        );
    }

    /// A node argument's value: a name or expression string, a number, or (an error later,
    /// where the type is known) another TOML value.
    pub(super) fn arg_value(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<S<ArgValue>> {
        let value = match v.get_ref() {
            DeValue::String(s) => ArgValue::Str(s.to_string(), self.str_start(&v.span(), s)),
            DeValue::Integer(_) => ArgValue::Lit(Lit::Int(self.int(v, what)?)),
            DeValue::Float(f) => ArgValue::Lit(Lit::Float(f.as_str().to_string())),
            other => ArgValue::Other(type_name(other)),
        };
        Some(S { v: value, span: v.span() })
    }

    pub(super) fn lit(&mut self, v: &Spanned<DeValue<'_>>, what: &str) -> Option<S<Lit>> {
        match v.get_ref() {
            DeValue::Integer(_) => self.int(v, what).map(|n| S { v: Lit::Int(n), span: v.span() }),
            DeValue::Float(f) => Some(S { v: Lit::Float(f.as_str().to_string()), span: v.span() }),
            other => {
                self.diags.push(v.span(), format!("{what} must be a number, found {}", type_name(other)));
                None
            }
        }
    }
}
