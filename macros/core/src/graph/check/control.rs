//! `[[while]]` and `[[if]]`: each names a run of consecutive bound nodes (its body) and a
//! condition. Rules, one function each: a valid fresh name, a body of consecutive nodes in
//! file order that no other control shares, a condition that is well-formed, and no collective
//! in a body whose condition may differ between ranks.

use std::collections::BTreeSet;

use super::bind::{Bound, Env};
use super::context::Ctx;
use super::values::typed_value;
use crate::graph::ir::{Control, ControlKind, NodeOp, Value};
use crate::graph::spec::diag::{list, suggest};
use crate::graph::spec::{Lit, Num, RawControl, RawControlKind, RawSpec, S};
use crate::syntax::model::Elem;
use crate::syntax::naming::is_snake_ident;

fn kind_name(kind: RawControlKind) -> &'static str {
    match kind {
        RawControlKind::While => "`[[while]]`",
        RawControlKind::If => "`[[if]]`",
    }
}

/// Validates every control of `raw` against the bound nodes.
pub(crate) fn controls(cx: &mut Ctx<'_>, raw: &RawSpec, bound: &Bound, env: &Env<'_>) -> Vec<Control> {
    let mut taken: BTreeSet<String> = bound.nodes.iter().map(|n| n.name.clone()).collect();
    let mut in_body = vec![false; bound.nodes.len()];
    let mut out = Vec::new();
    for c in &raw.controls {
        let name = control_name(cx, c, &mut taken);
        let body = body(cx, c, bound, &mut in_body);
        let kind = match c.kind {
            RawControlKind::While => loop_condition(cx, c, env),
            RawControlKind::If => if_condition(cx, c, env),
        };
        if let (Some(name), Some((first, len)), Some(kind)) = (name, body, kind) {
            // Kept when refused, so its condition buffer still counts as used (one error).
            collectives_rank_uniform(cx, c, &kind, first..first + len, bound);
            out.push(Control { name, kind, first, len, doc: c.doc.clone() });
        }
    }
    out.sort_by_key(|c| c.first);
    out
}

/// Rule: a control has a snake_case name no node or other control has.
fn control_name(cx: &mut Ctx<'_>, c: &RawControl, taken: &mut BTreeSet<String>) -> Option<String> {
    let Some(name) = &c.name else {
        cx.diags.push(c.span.clone(), format!("{} needs a `name`", kind_name(c.kind)));
        return None;
    };
    if !is_snake_ident(&name.v) {
        cx.diags.push(name.span.clone(), format!("`{}` must be a lowercase snake_case identifier", name.v));
        return None;
    }
    if !taken.insert(name.v.clone()) {
        cx.diags
            .push(name.span.clone(), format!("duplicate name `{}` (node and control names are one namespace)", name.v));
        return None;
    }
    Some(name.v.clone())
}

/// Rule: the body is a non-empty run of consecutive nodes, listed in file order, in no other
/// control's body. `(first, len)`.
fn body(cx: &mut Ctx<'_>, c: &RawControl, bound: &Bound, in_body: &mut [bool]) -> Option<(usize, usize)> {
    let Some(nodes) = &c.nodes else {
        cx.diags.push(c.span.clone(), format!("{} needs `nodes`, the names of the nodes it runs", kind_name(c.kind)));
        return None;
    };
    if nodes.v.is_empty() {
        cx.diags.push(nodes.span.clone(), "`nodes` is empty: a conditional body needs at least one node");
        return None;
    }
    let names = bound.nodes.iter().map(|n| n.name.as_str());
    let mut indices = Vec::new();
    for n in &nodes.v {
        match bound.nodes.iter().position(|b| b.name == n.v) {
            Some(i) => indices.push((i, n)),
            None => cx.diags.push(
                n.span.clone(),
                format!("unknown node `{}` (nodes: {}){}", n.v, list(names.clone()), suggest(&n.v, names.clone())),
            ),
        }
    }
    if indices.len() != nodes.v.len() {
        return None;
    }
    for w in indices.windows(2) {
        if w[1].0 != w[0].0 + 1 {
            cx.diags.push(
                w[1].1.span.clone(),
                format!(
                    "node `{}` does not follow `{}` in the file: a body is a run of consecutive `[[node]]`s, listed in file order",
                    w[1].1.v, w[0].1.v
                ),
            );
            return None;
        }
    }
    for &(i, n) in &indices {
        if in_body[i] {
            cx.diags.push(n.span.clone(), format!("node `{}` is already in the body of another control", n.v));
            return None;
        }
    }
    for &(i, _) in &indices {
        in_body[i] = true;
    }
    Some((indices[0].0, indices.len()))
}

/// Rule: a collective node runs in a body only when every rank provably runs that body the
/// same number of times, since ranks that disagree wait on each other forever (every rank runs
/// the same collectives in the same order: docs/multi-gpu.md). Only a `[[while]] repeat` count
/// is provably rank-uniform (a constant of the build); an `[[if]]` flag and an `until` buffer
/// are device data of each rank, so a collective in such a body is refused.
fn collectives_rank_uniform(
    cx: &mut Ctx<'_>,
    c: &RawControl,
    kind: &ControlKind,
    body: std::ops::Range<usize>,
    bound: &Bound,
) {
    let condition = match kind {
        ControlKind::Repeat(_) => return,
        ControlKind::Until { .. } => "its `until` buffer",
        ControlKind::If { .. } => "its `flag`",
    };
    for node in &bound.nodes[body] {
        if !matches!(node.op, NodeOp::Collective(_)) {
            continue;
        }
        let at = c.nodes.iter().flat_map(|ns| &ns.v).find(|n| n.v == node.name).map_or(&c.span, |n| &n.span);
        cx.diags.push(
            at.clone(),
            format!(
                "collective node `{}` is in the body of {} `{}`, whose condition ({condition}) is device data of each rank: ranks that see different values run different collectives and wait on each other forever (every rank must run the same collectives in the same order, docs/multi-gpu.md). kgraph cannot prove such a condition rank-uniform (only a `[[while]] repeat` count is), so move the collective out of the body",
                node.name,
                kind_name(c.kind),
                c.name.as_ref().map_or("?", |n| n.v.as_str()),
            ),
        );
    }
}

/// A whole number in 1..=u32::MAX for `what`.
fn count(cx: &mut Ctx<'_>, n: &S<Num>, what: &str) -> Option<u32> {
    let v = cx.whole(n, what)?;
    match u32::try_from(v) {
        Ok(v) if v >= 1 => Some(v),
        _ => {
            cx.diags.push(n.span.clone(), format!("{what} is {v}; it must be between 1 and {}", u32::MAX));
            None
        }
    }
}

/// A device buffer of `elem` named `name` (for a condition), or an error.
fn condition_buffer(cx: &mut Ctx<'_>, name: &S<String>, elem: Elem, env: &Env<'_>, what: &str) -> Option<usize> {
    let b = cx.named_buffer(name, env.buffers, what)?;
    let buf = &env.buffers[b];
    if buf.elem != elem || buf.role.is_host() {
        cx.diags.push(
            name.span.clone(),
            format!(
                "{what} reads its condition from device memory of dtype {elem}, but buffer `{}` is {} with role `{}`",
                buf.name,
                buf.elem,
                buf.role.name()
            ),
        );
        return None;
    }
    Some(b)
}

/// Rule: a `[[while]]` has `repeat`, or `until` with `max`, and nothing of an `[[if]]`.
fn loop_condition(cx: &mut Ctx<'_>, c: &RawControl, env: &Env<'_>) -> Option<ControlKind> {
    match (&c.repeat, &c.until) {
        (Some(r), None) => {
            if let Some(m) = &c.max {
                cx.diags
                    .push(m.span.clone(), "`max` caps an `until` loop; a `repeat` loop runs exactly `repeat` times");
                return None;
            }
            count(cx, r, "`repeat`").map(ControlKind::Repeat)
        }
        (None, Some(u)) => {
            let Some(max) = &c.max else {
                cx.diags.push(u.span.clone(), "an `until` loop needs `max`, the most iterations one launch may run");
                return None;
            };
            let max = count(cx, max, "`max`");
            let buffer = match &u.v.buffer {
                Some(b) => condition_buffer(cx, b, Elem::F32, env, "`until.buffer`"),
                None => {
                    cx.diags.push(
                        u.span.clone(),
                        "`until` needs `buffer`, a device f32 buffer tested after each iteration",
                    );
                    None
                }
            };
            let below = match &u.v.below {
                Some(l) => {
                    let as_float = S { v: Lit::Float(lit_text(&l.v)), span: l.span.clone() };
                    typed_value(cx.diags, &as_float, Elem::F32, "`until.below`")
                }
                None => {
                    cx.diags.push(u.span.clone(), "`until` needs `below`, the threshold that ends the loop");
                    None
                }
            };
            match (buffer, below, max) {
                (Some(buffer), Some(Value::Float(below)), Some(max)) => Some(ControlKind::Until { buffer, below, max }),
                _ => None,
            }
        }
        (Some(_), Some(u)) => {
            cx.diags.push(u.span.clone(), "a `[[while]]` has `repeat` or `until`, not both");
            None
        }
        (None, None) => {
            cx.diags.push(
                c.span.clone(),
                "a `[[while]]` needs `repeat = n` (iterations per launch) or `until = { buffer, below }` with `max`",
            );
            None
        }
    }
}

/// A literal's text as a float literal (`1` → `1.0`).
fn lit_text(l: &Lit) -> String {
    match l {
        Lit::Int(i) => format!("{i}.0"),
        Lit::Float(t) => t.clone(),
    }
}

/// Rule: an `[[if]]` has `flag`, a device i32 buffer.
fn if_condition(cx: &mut Ctx<'_>, c: &RawControl, env: &Env<'_>) -> Option<ControlKind> {
    let Some(flag) = &c.flag else {
        cx.diags
            .push(c.span.clone(), "an `[[if]]` needs `flag`, a device i32 buffer: the body runs when it is non-zero");
        return None;
    };
    condition_buffer(cx, flag, Elem::I32, env, "`flag`").map(|flag| ControlKind::If { flag })
}
