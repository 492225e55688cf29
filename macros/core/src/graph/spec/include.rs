//! `[[include]]`: another spec's nodes spliced into this spec's raw model, at the include's
//! position in node order. The included spec is read, its own includes spliced and validated on
//! its own by the pipeline first; here its raw nodes and controls are renamed
//! (`<name>_<node>`), its dims substituted by their values, its buffers and scalars replaced by
//! what the include binds them to (or by new `<name>_<buffer>` scratch buffers and
//! `<name>_<scalar>` scalars), and every span replaced by the `[[include]]` table's, so that a
//! later error about a spliced node is located at the include.
//!
//! Rules, one function each: the include names a prefix and a spec; the included spec uses this
//! spec's `[kernels]`; every buffer binding names an included buffer and a buffer of this spec of
//! the same dtype and length; every non-scratch included buffer is bound; every scalar binding
//! names an included scalar and a scalar of this spec of the same dtype, or a literal.

use std::collections::BTreeMap;

use super::diag::{list, suggest};
use super::expr;
use super::raw::{
    ArgValue, IncludedFile, Lit, Num, RawBatch, RawBuffer, RawControl, RawGemm, RawInclude, RawNode, RawScalar,
    RawSpec, ScalarTarget, Span, S,
};
use crate::diagnostics::{Ctxt, Location};
use crate::syntax::naming::is_snake_ident;

/// Rule: an include has a snake_case `name` and a `spec` naming a `.toml` file (a Rust or CUDA
/// file named by mistake gets one error here, not TOML syntax errors inside it). Both, when valid.
pub fn header(inc: &RawInclude, diags: &mut Ctxt) -> Option<(S<String>, S<String>)> {
    let name = match &inc.name {
        Some(n) if is_snake_ident(&n.v) => Some(n.clone()),
        Some(n) => {
            diags.push(
                n.span.clone(),
                format!(
                    "include name `{}` must be a lowercase snake_case identifier (it prefixes the included names)",
                    n.v
                ),
            );
            None
        }
        None => {
            diags.push(inc.span.clone(), "`[[include]]` needs a `name`, the prefix of the included names");
            None
        }
    };
    let spec = match &inc.spec {
        Some(p) if p.v.ends_with(".toml") => Some(p.clone()),
        Some(p) => {
            diags.push(
                p.span.clone(),
                format!("`[[include]]` `spec` must name a graph spec (a `.toml` file), found `{}`", p.v),
            );
            None
        }
        None => {
            diags.push(
                inc.span.clone(),
                "`[[include]]` needs a `spec`, the included spec's path (relative to the crate root)",
            );
            None
        }
    };
    Some((name?, spec?))
}

/// Adds to every error located at an include (about a node spliced by it) which spliced nodes
/// it is about: `(in node `w_affine`, spliced from `graphs/x.toml` by `[[include]]` `w`)`.
pub fn name_spliced_nodes(raw: &RawSpec, diags: &mut Ctxt) {
    if raw.includes.is_empty() {
        return;
    }
    diags.annotate(|at, message| {
        let Location::Spec(span) = at else { return };
        let Some(inc) = raw.includes.iter().find(|i| i.span == *span) else { return };
        let (Some(name), Some(spec)) = (&inc.name, &inc.spec) else { return };
        let nodes: Vec<&str> = raw
            .nodes
            .iter()
            .filter(|n| n.span == *span)
            .filter_map(|n| n.name.as_ref().map(|s| s.v.as_str()))
            .collect();
        let named = nodes.iter().filter(|n| message.contains(&format!("`{n}`"))).count();
        let which = match (named, nodes.as_slice()) {
            (1, _) | (_, []) => String::new(),
            (_, [one]) => format!("in node `{one}`, "),
            (_, many) => format!("in one of the nodes {}, ", list(many.iter().copied())),
        };
        message.push_str(&format!(" ({which}spliced from `{}` by `[[include]]` `{}`)", spec.v, name.v));
    });
}

/// How the included spec's names read in this spec.
struct Renames {
    prefix: String,
    dims: BTreeMap<String, i128>,
    buffers: BTreeMap<String, String>,
    scalars: BTreeMap<String, ScalarTarget>,
    span: Span,
}

/// Splices `sub` (the spec `inc` includes: read, its own includes spliced, valid on its own) into
/// `parent` at `inc`'s position. Binding errors go to `diags`, spanned in `parent`; then nothing
/// is spliced and `false` is returned.
pub fn splice(
    parent: &mut RawSpec,
    inc: &RawInclude,
    name: &str,
    path: &S<String>,
    sub: &RawSpec,
    diags: &mut Ctxt,
) -> bool {
    let errors_before = diags.len();
    same_kernels(parent, path, sub, diags);
    let sub_dims = dims_of(sub);
    let buffers = bind_buffers(parent, inc, name, path, sub, &sub_dims, diags);
    let scalars = bind_scalars(parent, inc, name, path, sub, diags);
    if diags.len() > errors_before {
        return false;
    }
    let span = inc.span.clone();
    let r = Renames { prefix: name.to_string(), dims: sub_dims, buffers, scalars, span: span.clone() };
    let bound_buffer = |n: &str| inc.buffers.iter().flat_map(|b| &b.v).any(|(k, _)| k.v == n);
    let bound_scalar = |n: &str| inc.scalars.iter().flat_map(|b| &b.v).any(|(k, _)| k.v == n);
    // The included spec's `plan_memory = false` covers its own scratch buffers here too.
    let sub_plans = sub.plan_memory.as_ref().map_or(true, |p| p.v);
    for b in sub.buffers.iter().filter(|b| !bound_buffer(&b.name.v)) {
        if let Some(nb) = scratch_copy(&r, b, sub_plans) {
            parent.buffers.push(nb);
        }
    }
    for s in sub.scalars.iter().filter(|s| !bound_scalar(&s.name.v)) {
        parent.scalars.push(RawScalar {
            name: r.s(r.prefixed(&s.name.v)),
            dtype: s.dtype.as_ref().map(|d| r.s(d.v.clone())),
            default: s.default.as_ref().map(|d| r.s(d.v.clone())),
            doc: s.doc.clone(),
        });
    }
    let at = parent.nodes.iter().position(|n| n.span.start > span.start).unwrap_or(parent.nodes.len());
    let nodes: Vec<RawNode> = sub.nodes.iter().map(|n| r.node(n, sub.pdl.as_ref().is_some_and(|p| p.v))).collect();
    parent.nodes.splice(at..at, nodes);
    parent.controls.extend(sub.controls.iter().map(|c| r.control(c)));
    parent.included.push(IncludedFile { name: name.to_string(), spec: path.v.clone() });
    parent
        .included
        .extend(sub.included.iter().map(|f| IncludedFile { name: r.prefixed(&f.name), spec: f.spec.clone() }));
    true
}

/// A spec's dims as written (valid specs only: every value is there).
fn dims_of(raw: &RawSpec) -> BTreeMap<String, i128> {
    raw.dims.iter().map(|d| (d.name.v.clone(), d.value.v)).collect()
}

/// A buffer's length with `dims`, when it evaluates (a `slot` without `len` holds 1).
fn len_of(b: &RawBuffer, dims: &BTreeMap<String, i128>) -> Option<i128> {
    match b.len.as_ref().map(|l| &l.v) {
        None => (b.role.as_ref().map(|r| r.v.as_str()) == Some("slot")).then_some(1),
        Some(Num::Int(v)) => Some(*v),
        Some(Num::Expr(src, _)) => expr::parse(src).ok()?.eval(dims).ok()?.whole(),
    }
}

fn len_text(b: &RawBuffer) -> String {
    match b.len.as_ref().map(|l| &l.v) {
        None => "1".to_string(),
        Some(Num::Int(v)) => v.to_string(),
        Some(Num::Expr(src, _)) => src.clone(),
    }
}

/// Rule: the included spec's `[kernels] source` and `module` are this spec's (one handle module
/// per struct).
fn same_kernels(parent: &RawSpec, path: &S<String>, sub: &RawSpec, diags: &mut Ctxt) {
    let table = |raw: &RawSpec| {
        let k = raw.kernels.as_ref();
        let get = |s: Option<&S<String>>| s.map_or_else(|| "?".to_string(), |s| s.v.clone());
        (get(k.and_then(|k| k.source.as_ref())), get(k.and_then(|k| k.module.as_ref())))
    };
    let (mine, theirs) = (table(parent), table(sub));
    if mine != theirs {
        diags.push(
            path.span.clone(),
            format!(
                "included spec `{}` declares its kernels in `{}` (module `{}`), but this spec in `{}` (module `{}`): an included spec must have the same `[kernels] source` and `module`",
                path.v, theirs.0, theirs.1, mine.0, mine.1
            ),
        );
    }
}

/// Rules: each buffer binding names an included buffer and a buffer of this spec with the same
/// dtype and length; every included buffer that is not `scratch` is bound. Included buffer →
/// buffer of this spec (an unbound scratch → `<name>_<buffer>`).
fn bind_buffers(
    parent: &RawSpec,
    inc: &RawInclude,
    name: &str,
    path: &S<String>,
    sub: &RawSpec,
    sub_dims: &BTreeMap<String, i128>,
    diags: &mut Ctxt,
) -> BTreeMap<String, String> {
    let parent_dims = dims_of(parent);
    let sub_names: Vec<&str> = sub.buffers.iter().map(|b| b.name.v.as_str()).collect();
    let parent_names: Vec<&str> = parent.buffers.iter().map(|b| b.name.v.as_str()).collect();
    let mut out = BTreeMap::new();
    for (key, target) in inc.buffers.iter().flat_map(|b| &b.v) {
        let Some(theirs) = sub.buffers.iter().find(|b| b.name.v == key.v) else {
            diags.push(
                key.span.clone(),
                format!(
                    "included spec `{}` has no buffer `{}` (its buffers: {}){}",
                    path.v,
                    key.v,
                    list(sub_names.iter().copied()),
                    suggest(&key.v, sub_names.iter().copied())
                ),
            );
            continue;
        };
        let Some(mine) = parent.buffers.iter().find(|b| b.name.v == target.v) else {
            diags.push(
                target.span.clone(),
                format!(
                    "unknown buffer `{}` for included buffer `{}` of `{}` (buffers: {}){}",
                    target.v,
                    key.v,
                    path.v,
                    list(parent_names.iter().copied()),
                    suggest(&target.v, parent_names.iter().copied())
                ),
            );
            continue;
        };
        let (their_dtype, my_dtype) = (theirs.dtype.as_ref().map(|d| &d.v), mine.dtype.as_ref().map(|d| &d.v));
        if let (Some(t), Some(m)) = (their_dtype, my_dtype) {
            if t != m {
                diags.push(
                    target.span.clone(),
                    format!(
                        "included buffer `{}` of `{}` is `{t}`, but `{}` is `{m}`: a bound buffer must have the same dtype",
                        key.v, path.v, target.v
                    ),
                );
                continue;
            }
        }
        if let (Some(t), Some(m)) = (len_of(theirs, sub_dims), len_of(mine, &parent_dims)) {
            if t != m {
                diags.push(
                    target.span.clone(),
                    format!(
                        "included buffer `{}` of `{}` holds {t} elements (len = `{}` with its dims), but `{}` holds {m} (len = `{}`): a bound buffer must have the same length",
                        key.v,
                        path.v,
                        len_text(theirs),
                        target.v,
                        len_text(mine)
                    ),
                );
                continue;
            }
        }
        out.insert(key.v.clone(), target.v.clone());
    }
    let missing_at = inc.buffers.as_ref().map_or(&inc.span, |b| &b.span);
    for b in &sub.buffers {
        if out.contains_key(&b.name.v) || inc.buffers.iter().flat_map(|t| &t.v).any(|(k, _)| k.v == b.name.v) {
            continue;
        }
        let role = b.role.as_ref().map_or("?", |r| r.v.as_str());
        if role == "scratch" {
            out.insert(b.name.v.clone(), format!("{name}_{}", b.name.v));
        } else {
            diags.push(
                missing_at.clone(),
                format!(
                    "included buffer `{}` of `{}` (role `{role}`) is not bound: add `{} = \"<a buffer of this spec>\"` to this include's `buffers` (only `scratch` buffers may stay unbound)",
                    b.name.v, path.v, b.name.v
                ),
            );
        }
    }
    out
}

/// Rule: each scalar binding names an included scalar and a scalar of this spec with the same
/// dtype, or is a literal. Included scalar → target (an unbound one → `<name>_<scalar>`).
fn bind_scalars(
    parent: &RawSpec,
    inc: &RawInclude,
    name: &str,
    path: &S<String>,
    sub: &RawSpec,
    diags: &mut Ctxt,
) -> BTreeMap<String, ScalarTarget> {
    let sub_names: Vec<&str> = sub.scalars.iter().map(|s| s.name.v.as_str()).collect();
    let parent_names: Vec<&str> = parent.scalars.iter().map(|s| s.name.v.as_str()).collect();
    let mut out = BTreeMap::new();
    let bindings = inc.scalars.iter().flat_map(|s| &s.v);
    for (key, target) in bindings.clone() {
        let Some(theirs) = sub.scalars.iter().find(|s| s.name.v == key.v) else {
            diags.push(
                key.span.clone(),
                format!(
                    "included spec `{}` has no scalar `{}` (its scalars: {}){}",
                    path.v,
                    key.v,
                    list(sub_names.iter().copied()),
                    suggest(&key.v, sub_names.iter().copied())
                ),
            );
            continue;
        };
        if let ScalarTarget::Scalar(t) = &target.v {
            let Some(mine) = parent.scalars.iter().find(|s| &s.name.v == t) else {
                diags.push(
                    target.span.clone(),
                    format!(
                        "unknown scalar `{t}` for included scalar `{}` of `{}` (scalars: {}){}",
                        key.v,
                        path.v,
                        list(parent_names.iter().copied()),
                        suggest(t, parent_names.iter().copied())
                    ),
                );
                continue;
            };
            if let (Some(a), Some(b)) = (&theirs.dtype, &mine.dtype) {
                if a.v != b.v {
                    diags.push(
                        target.span.clone(),
                        format!(
                            "included scalar `{}` of `{}` is `{}`, but `{t}` is `{}`: a bound scalar must have the same dtype",
                            key.v, path.v, a.v, b.v
                        ),
                    );
                    continue;
                }
            }
        }
        out.insert(key.v.clone(), target.v.clone());
    }
    for s in &sub.scalars {
        if !bindings.clone().any(|(k, _)| k.v == s.name.v) {
            out.insert(s.name.v.clone(), ScalarTarget::Scalar(format!("{name}_{}", s.name.v)));
        }
    }
    out
}

/// An unbound included scratch buffer as a buffer of this spec, its length a constant; kept out
/// of the plan when the included spec plans nothing (`sub_plans == false`).
fn scratch_copy(r: &Renames, b: &RawBuffer, sub_plans: bool) -> Option<RawBuffer> {
    let len = len_of(b, &r.dims)?;
    Some(RawBuffer {
        name: r.s(r.prefixed(&b.name.v)),
        dtype: b.dtype.as_ref().map(|d| r.s(d.v.clone())),
        len: Some(r.s(Num::Int(len))),
        role: b.role.as_ref().map(|d| r.s(d.v.clone())),
        doc: b.doc.clone(),
        plan: if sub_plans { b.plan.as_ref().map(|p| r.s(p.v)) } else { Some(r.s(false)) },
    })
}

impl Renames {
    fn s<T>(&self, v: T) -> S<T> {
        S { v, span: self.span.clone() }
    }

    fn prefixed(&self, name: &str) -> String {
        format!("{}_{name}", self.prefix)
    }

    /// A name in the included spec as this spec reads it (a dim: its value).
    fn name(&self, name: &str) -> String {
        if let Some(v) = self.dims.get(name) {
            return v.to_string();
        }
        if let Some(b) = self.buffers.get(name) {
            return b.clone();
        }
        match self.scalars.get(name) {
            Some(ScalarTarget::Scalar(s)) => s.clone(),
            Some(ScalarTarget::Lit(Lit::Int(i))) => i.to_string(),
            Some(ScalarTarget::Lit(Lit::Float(f))) => f.clone(),
            None => name.to_string(),
        }
    }

    fn buffer(&self, b: &S<String>) -> S<String> {
        self.s(self.buffers.get(&b.v).cloned().unwrap_or_else(|| b.v.clone()))
    }

    fn num(&self, n: &S<Num>) -> S<Num> {
        self.s(match &n.v {
            Num::Int(v) => Num::Int(*v),
            Num::Expr(src, _) => Num::Expr(substitute(src, |id| self.name(id)), None),
        })
    }

    fn nums(&self, n: &S<Vec<S<Num>>>) -> S<Vec<S<Num>>> {
        self.s(n.v.iter().map(|x| self.num(x)).collect())
    }

    fn arg(&self, v: &ArgValue) -> ArgValue {
        match v {
            ArgValue::Str(src, _) => match self.scalars.get(src.trim()) {
                Some(ScalarTarget::Lit(l)) => ArgValue::Lit(l.clone()),
                _ => ArgValue::Str(substitute(src, |id| self.name(id)), None),
            },
            other => other.clone(),
        }
    }

    /// A node of the included spec as a node of this one; `pdl` is the included spec's
    /// top-level `pdl`, which its kernel nodes keep (this spec's does not apply to them).
    fn node(&self, n: &RawNode, pdl: bool) -> RawNode {
        let is_kernel = n.kernel.is_some()
            && n.memset.is_none()
            && n.memcpy.is_none()
            && n.collective.is_none()
            && n.gemm.is_none();
        let own = n.name.as_ref().or(n.kernel.as_ref()).map(|s| self.s(self.prefixed(&s.v)));
        RawNode {
            span: self.span.clone(),
            name: own,
            kernel: n.kernel.as_ref().map(|k| self.s(k.v.clone())),
            grid: n.grid.as_ref().map(|g| self.nums(g)),
            block: n.block.as_ref().map(|b| self.nums(b)),
            shared: n.shared.as_ref().map(|x| self.num(x)),
            args: n
                .args
                .as_ref()
                .map(|a| self.s(a.v.iter().map(|(k, v)| (self.s(k.v.clone()), self.s(self.arg(&v.v)))).collect())),
            doc: n.doc.clone(),
            pdl: if is_kernel { Some(self.s(n.pdl.as_ref().map_or(pdl, |p| p.v))) } else { None },
            tune: n.tune.as_ref().map(|t| self.nums(t)),
            memset: n.memset.as_ref().map(|m| {
                let mut m2 = m.v.clone();
                m2.dst = m.v.dst.as_ref().map(|d| self.buffer(d));
                m2.value = m.v.value.as_ref().map(|v| self.s(v.v.clone()));
                self.s(m2)
            }),
            memcpy: n.memcpy.as_ref().map(|m| {
                let mut m2 = m.v.clone();
                m2.src = m.v.src.as_ref().map(|d| self.buffer(d));
                m2.dst = m.v.dst.as_ref().map(|d| self.buffer(d));
                self.s(m2)
            }),
            collective: n.collective.as_ref().map(|c| {
                let mut c2 = c.v.clone();
                c2.op = c.v.op.as_ref().map(|o| self.s(o.v.clone()));
                c2.reduce = c.v.reduce.as_ref().map(|o| self.s(o.v.clone()));
                c2.root = c.v.root.as_ref().map(|o| self.s(o.v));
                c2.buffer = c.v.buffer.as_ref().map(|d| self.buffer(d));
                c2.send = c.v.send.as_ref().map(|d| self.buffer(d));
                c2.recv = c.v.recv.as_ref().map(|d| self.buffer(d));
                self.s(c2)
            }),
            gemm: n.gemm.as_ref().map(|g| self.s(self.gemm(&g.v))),
        }
    }

    /// A `gemm` of the included spec with this spec's buffers, scalars and dim values.
    fn gemm(&self, g: &RawGemm) -> RawGemm {
        let num = |x: &Option<S<Num>>| x.as_ref().map(|x| self.num(x));
        let factor = |x: &Option<S<ArgValue>>| x.as_ref().map(|x| self.s(self.arg(&x.v)));
        RawGemm {
            a: g.a.as_ref().map(|d| self.buffer(d)),
            b: g.b.as_ref().map(|d| self.buffer(d)),
            c: g.c.as_ref().map(|d| self.buffer(d)),
            m: num(&g.m),
            n: num(&g.n),
            k: num(&g.k),
            trans_a: g.trans_a.as_ref().map(|t| self.s(t.v)),
            trans_b: g.trans_b.as_ref().map(|t| self.s(t.v)),
            lda: num(&g.lda),
            ldb: num(&g.ldb),
            ldc: num(&g.ldc),
            alpha: factor(&g.alpha),
            beta: factor(&g.beta),
            compute: g.compute.as_ref().map(|c| self.s(c.v.clone())),
            batch: g.batch.as_ref().map(|b| {
                self.s(RawBatch {
                    count: num(&b.v.count),
                    stride_a: num(&b.v.stride_a),
                    stride_b: num(&b.v.stride_b),
                    stride_c: num(&b.v.stride_c),
                })
            }),
        }
    }

    /// A `[[while]]`/`[[if]]` of the included spec as one of this spec.
    fn control(&self, c: &RawControl) -> RawControl {
        RawControl {
            kind: c.kind,
            span: self.span.clone(),
            name: c.name.as_ref().map(|n| self.s(self.prefixed(&n.v))),
            nodes: c.nodes.as_ref().map(|ns| self.s(ns.v.iter().map(|n| self.s(self.prefixed(&n.v))).collect())),
            repeat: c.repeat.as_ref().map(|x| self.num(x)),
            until: c.until.as_ref().map(|u| {
                let mut u2 = u.v.clone();
                u2.buffer = u.v.buffer.as_ref().map(|b| self.buffer(b));
                u2.below = u.v.below.as_ref().map(|b| self.s(b.v.clone()));
                self.s(u2)
            }),
            max: c.max.as_ref().map(|x| self.num(x)),
            flag: c.flag.as_ref().map(|b| self.buffer(b)),
            doc: c.doc.clone(),
        }
    }
}

/// `src` with every identifier that is not a function name (followed by `(`) replaced by
/// `rename(identifier)`; numbers (`1_000`), operators and spacing are kept as written.
pub fn substitute(src: &str, rename: impl Fn(&str) -> String) -> String {
    let bytes = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let word = c.is_ascii_alphanumeric() || c == b'_';
        if !word {
            let ch = src[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        let start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        let token = &src[start..i];
        let is_call = src[i..].trim_start().starts_with('(');
        if c.is_ascii_digit() || is_call {
            out.push_str(token);
        } else {
            out.push_str(&rename(token));
        }
    }
    out
}
