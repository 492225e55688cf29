//! The shared state of one validation run: the diagnostics, the spec's one namespace of dims,
//! buffers and scalars, and the evaluation of `Num`s (integers or expressions over dims).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use crate::diagnostics::Ctxt;
use crate::graph::ir::Buffer;
use crate::graph::spec::diag::{clip, list, suggest};
use crate::graph::spec::expr;
use crate::graph::spec::{Num, Span, S};

/// What a spec name declares: dims, buffers and scalars share one namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameKind {
    /// A `[dims]` entry.
    Dim,
    /// A `[buffers.<name>]` table.
    Buffer,
    /// A `[scalars.<name>]` table.
    Scalar,
}

impl std::fmt::Display for NameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NameKind::Dim => "dim",
            NameKind::Buffer => "buffer",
            NameKind::Scalar => "scalar",
        })
    }
}

/// Shared state of one validation run.
pub(crate) struct Ctx<'a> {
    pub diags: &'a mut Ctxt,
    /// Name → (kind, span of its declaration), for dims, buffers and scalars.
    pub names: BTreeMap<String, (NameKind, Span)>,
    pub dims: BTreeMap<String, i128>,
    /// Names declared more than once: references to them are not reported again.
    pub poisoned: BTreeSet<String>,
}

impl<'a> Ctx<'a> {
    /// A run reporting to `diags`, with nothing declared yet.
    pub fn new(diags: &'a mut Ctxt) -> Self {
        Ctx { diags, names: BTreeMap::new(), dims: BTreeMap::new(), poisoned: BTreeSet::new() }
    }
}

impl Ctx<'_> {
    /// Evaluates a `Num` to a whole number; errors point inside the expression when possible.
    pub fn whole(&mut self, n: &S<Num>, what: &str) -> Option<i128> {
        let (src, start) = match &n.v {
            Num::Int(v) => return Some(*v),
            Num::Expr(src, start) => (src, *start),
        };
        // A range inside the expression text, as a range of the spec file when known.
        let at = |r: Range<usize>| match start {
            Some(s) => s + r.start..s + r.end.max(r.start + 1).min(src.len().max(1)),
            None => n.span.clone(),
        };
        // The expression as messages quote it: a generated one may be very long.
        let shown = clip(src, 80);
        let e = match expr::parse(src) {
            Ok(e) => e,
            Err(err) => {
                self.diags.push(at(err.span), format!("{what}: cannot parse `{shown}`: {}", err.message));
                return None;
            }
        };
        if !self.names_are_dims(&e, &shown, what, at) {
            return None;
        }
        match e.eval(&self.dims) {
            Ok(r) => match r.whole() {
                Some(v) => Some(v),
                None => {
                    self.diags.push(
                        n.span.clone(),
                        format!("{what}: `{shown}` = {r} is not a whole number; round it with ceil() or floor()"),
                    );
                    None
                }
            },
            Err(msg) => {
                self.diags.push(n.span.clone(), format!("{what}: `{shown}`: {msg}"));
                None
            }
        }
    }

    /// True when every name in `e` is a dim; reports each one that is not.
    /// The buffer `name` names (for `what`), or a located error listing the buffers (none when it
    /// was declared with an error, already reported). Shared by the memcpy, memset, collective and
    /// condition rules.
    pub fn named_buffer(&mut self, name: &S<String>, buffers: &[Buffer], what: &str) -> Option<usize> {
        if let Some(b) = buffers.iter().position(|b| b.name == name.v) {
            return Some(b);
        }
        // Declared as a buffer, but its declaration had an error (already reported).
        if self.names.get(&name.v).is_some_and(|(k, _)| matches!(k, NameKind::Buffer)) {
            return None;
        }
        let names = buffers.iter().map(|b| b.name.as_str());
        self.diags.push(
            name.span.clone(),
            format!(
                "unknown buffer `{}` for {what} (buffers: {}){}",
                name.v,
                list(names.clone()),
                suggest(&name.v, buffers.iter().map(|b| b.name.as_str()))
            ),
        );
        None
    }

    fn names_are_dims(&mut self, e: &expr::Expr, src: &str, what: &str, at: impl Fn(Range<usize>) -> Span) -> bool {
        let mut ok = true;
        for (name, span) in e.names() {
            if !self.dims.contains_key(name) {
                ok = false;
                let kind = match self.names.get(name) {
                    Some((kind, _)) => format!("; `{name}` is a {kind}, only dims can appear in expressions"),
                    None => suggest(name, self.dims.keys().map(String::as_str)),
                };
                self.diags.push(at(span), format!("{what}: unknown dim `{name}` in `{src}`{kind}"));
            }
        }
        ok
    }
}
