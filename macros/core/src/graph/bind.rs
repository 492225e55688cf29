//! Binds each `[[node]]` to its kernel's declared signature: every parameter gets exactly one
//! argument of the right kind and dtype, roles allow what the kernel does to each buffer, no
//! written buffer is aliased; then checks the node order (nothing read before it is written)
//! and that every buffer and scalar is used.

use std::collections::BTreeMap;

use super::diag::{list, suggest};
use super::ir::{Arg, Binding, Buffer, Dim3, Node, Scalar, Value};
use super::spec::{ArgValue, Lit, Num, RawNode, RawSpec, Span, S};
use super::validate::{int_value, is_snake_ident, num_src, typed_value, Ctx};
use crate::model::{KernelDecl, ParamKind};
use crate::parse::ident_text;

/// Nodes bound to kernels, with the spans later checks report on.
pub(crate) struct Bound {
    /// The kernels used, each once, in order of first use.
    pub kernels: Vec<KernelDecl>,
    /// The bound nodes (only those that bound without error).
    pub nodes: Vec<Node>,
    /// Per bound node: the span of each argument's value, in parameter order.
    pub arg_spans: Vec<Vec<Span>>,
}

fn signature(d: &KernelDecl) -> String {
    let params: Vec<String> =
        d.params.iter().map(|p| format!("{}: {}", ident_text(&p.name), p.kind.rust_decl())).collect();
    format!("{}({})", ident_text(&d.name), params.join(", "))
}

const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
const MAX_GRID: [u32; 3] = [i32::MAX as u32, 65535, 65535];
/// The largest dynamic shared memory any current GPU grants a block (227 KiB, Hopper, opt-in).
const MAX_SHARED: i128 = 227 * 1024;

fn launch_dims(cx: &mut Ctx<'_>, v: &Option<S<Vec<S<Num>>>>, node: &RawNode, key: &str, max: [u32; 3]) -> Option<Dim3> {
    let Some(v) = v else {
        let at = node.kernel.as_ref().map_or(node.span.clone(), |k| k.span.clone());
        cx.diags.error(at, format!("node has no `{key}` (an integer, an expression over dims, or [x, y, z])"));
        return None;
    };
    let mut value = [1u32; 3];
    let mut ok = true;
    for (i, part) in v.v.iter().enumerate() {
        let axis = ["x", "y", "z"][i];
        match cx.whole(part, &format!("`{key}`")) {
            Some(x) if x >= 1 && x <= i128::from(max[i]) => value[i] = x as u32,
            Some(x) => {
                cx.diags.error(part.span.clone(), format!("`{key}`.{axis} = {x}, must be between 1 and {}", max[i]));
                ok = false;
            }
            None => ok = false,
        }
    }
    if ok && key == "block" && value.iter().map(|&x| u64::from(x)).product::<u64>() > 1024 {
        cx.diags.error(v.span.clone(), format!("`block` = {value:?} has more than 1024 threads"));
        ok = false;
    }
    let src: Vec<String> = v.v.iter().map(|p| num_src(&p.v)).collect();
    let src = if src.len() == 1 { src[0].clone() } else { format!("[{}]", src.join(", ")) };
    ok.then_some(Dim3 { value, src })
}

/// Binds every node; errors go to `cx.diags`.
pub(crate) fn bind_nodes(
    cx: &mut Ctx<'_>,
    raw: &RawSpec,
    decls: &[KernelDecl],
    buffers: &[Buffer],
    scalars: &[Scalar],
) -> Bound {
    let mut out = Bound { kernels: Vec::new(), nodes: Vec::new(), arg_spans: Vec::new() };
    let mut node_names: BTreeMap<String, Span> = BTreeMap::new();
    if raw.nodes.is_empty() {
        cx.diags.error(0..0, "the spec has no nodes: add at least one `[[node]]` table");
    }
    for node in &raw.nodes {
        let Some(kernel) = &node.kernel else {
            cx.diags.error(node.span.clone(), "node has no `kernel` (the name of a `#[kernel]` declaration)");
            continue;
        };
        let decl = decls.iter().find(|d| ident_text(&d.name) == kernel.v);
        let name = node.name.clone().unwrap_or_else(|| kernel.clone());
        let name_ok = if !is_snake_ident(&name.v) {
            cx.diags
                .error(name.span.clone(), format!("node name `{}` must be a lowercase snake_case identifier", name.v));
            false
        } else if node_names.contains_key(&name.v) {
            let hint = if node.name.is_none() { "; give the nodes distinct `name`s" } else { "" };
            cx.diags.error(name.span.clone(), format!("duplicate node name `{}`{hint}", name.v));
            false
        } else {
            node_names.insert(name.v.clone(), name.span.clone());
            true
        };
        let grid = launch_dims(cx, &node.grid, node, "grid", MAX_GRID);
        let block = launch_dims(cx, &node.block, node, "block", MAX_BLOCK);
        let shared = match &node.shared {
            None => Some(0),
            Some(s) => cx.whole(s, "`shared`").and_then(|v| {
                if (0..=MAX_SHARED).contains(&v) {
                    Some(v as u32)
                } else {
                    cx.diags.error(s.span.clone(), format!("`shared` = {v} bytes, must be between 0 and {MAX_SHARED}"));
                    None
                }
            }),
        };
        let Some(decl) = decl else {
            let names: Vec<String> = decls.iter().map(|d| ident_text(&d.name)).collect();
            cx.diags.error(
                kernel.span.clone(),
                format!(
                    "unknown kernel `{}` (declared kernels: {}){}",
                    kernel.v,
                    list(names.iter().map(String::as_str)),
                    suggest(&kernel.v, names.iter().map(String::as_str))
                ),
            );
            continue;
        };
        let Some((args, spans)) = bind_args(cx, node, kernel, decl, buffers, scalars) else { continue };
        let (Some(grid), Some(block), Some(shared), true) = (grid, block, shared, name_ok) else { continue };
        let k = match out.kernels.iter().position(|d| d.name == decl.name) {
            Some(k) => k,
            None => {
                out.kernels.push(decl.clone());
                out.kernels.len() - 1
            }
        };
        let pdl = node.pdl.as_ref().or(raw.pdl.as_ref()).is_some_and(|p| p.v);
        out.nodes.push(Node { name: name.v, kernel: k, grid, block, shared, args, doc: node.doc.clone(), pdl });
        out.arg_spans.push(spans);
    }
    out
}

fn bind_args(
    cx: &mut Ctx<'_>,
    node: &RawNode,
    kernel: &S<String>,
    decl: &KernelDecl,
    buffers: &[Buffer],
    scalars: &[Scalar],
) -> Option<(Vec<Arg>, Vec<Span>)> {
    let sig = signature(decl);
    let given: Vec<(S<String>, S<ArgValue>)> = node.args.as_ref().map(|a| a.v.clone()).unwrap_or_default();
    let params: Vec<String> = decl.params.iter().map(|p| ident_text(&p.name)).collect();
    let mut ok = true;
    for (key, _) in &given {
        if !params.contains(&key.v) {
            ok = false;
            cx.diags.error(
                key.span.clone(),
                format!(
                    "extra argument `{}`: kernel `{sig}` has no such parameter{}",
                    key.v,
                    suggest(&key.v, params.iter().map(String::as_str))
                ),
            );
        }
    }
    let missing: Vec<&str> =
        params.iter().filter(|p| !given.iter().any(|(k, _)| &k.v == *p)).map(String::as_str).collect();
    if !missing.is_empty() {
        ok = false;
        let at = node.args.as_ref().map_or(kernel.span.clone(), |a| a.span.clone());
        cx.diags.error(at, format!("missing argument(s) {} for kernel `{sig}`", list(missing)));
    }
    let mut args = Vec::new();
    let mut spans = Vec::new();
    for p in &decl.params {
        let pname = ident_text(&p.name);
        let Some((_, value)) = given.iter().find(|(k, _)| k.v == pname) else { continue };
        let what = format!("parameter `{pname}: {}` of `{}`", p.kind.rust_decl(), kernel.v);
        match bind_one(cx, &what, p.kind, value, buffers, scalars) {
            Some(binding) => {
                args.push(Arg { param: pname, elem: p.kind.elem(), binding });
                spans.push(value.span.clone());
            }
            None => ok = false,
        }
    }
    if !ok {
        return None;
    }
    // Aliasing: a buffer passed to a `&mut` or `PinnedMut` parameter must not be passed anywhere else.
    for (i, a) in args.iter().enumerate() {
        for (j, b) in args.iter().enumerate().skip(i + 1) {
            let (Some((x, wx)), Some((y, wy))) = (a.binding.buffer_access(), b.binding.buffer_access()) else {
                continue;
            };
            if x == y && (wx || wy) {
                ok = false;
                let pinned =
                    matches!(a.binding, Binding::PinnedMut { .. }) || matches!(b.binding, Binding::PinnedMut { .. });
                let writer = if pinned { "`PinnedMut`" } else { "`&mut`" };
                cx.diags.error(
                    spans[j].clone(),
                    format!(
                        "buffer `{}` is passed to both `{}` and `{}` of kernel `{sig}`, and one of them is {writer}: a written buffer must not be aliased",
                        buffers[x].name, a.param, b.param
                    ),
                );
            }
        }
    }
    ok.then_some((args, spans))
}

fn bind_one(
    cx: &mut Ctx<'_>,
    what: &str,
    kind: ParamKind,
    value: &S<ArgValue>,
    buffers: &[Buffer],
    scalars: &[Scalar],
) -> Option<Binding> {
    let span = value.span.clone();
    let (text, start) = match &value.v {
        ArgValue::Str(s, start) => (s.as_str(), *start),
        ArgValue::Lit(lit) => {
            let ParamKind::Scalar(elem) = kind else {
                cx.diags.error(span, format!("{what} takes a buffer name, found a number"));
                return None;
            };
            let value = typed_value(cx.diags, &S { v: lit.clone(), span: span.clone() }, elem, what)?;
            let src = match lit {
                Lit::Int(v) => v.to_string(),
                Lit::Float(t) => t.clone(),
            };
            return Some(Binding::Const { value, src });
        }
        ArgValue::Other(ty) => {
            cx.diags
                .error(span, format!("{what}: an argument is a name, an expression over dims or a number, found {ty}"));
            return None;
        }
    };
    let buffer = buffers.iter().position(|b| b.name == text);
    let kind_of = cx.names.get(text).map(|(k, _)| *k);
    // Declared, but its declaration had an error (already reported): nothing more to say.
    let invalid = match kind_of {
        Some("buffer") => buffer.is_none(),
        Some("scalar") => !scalars.iter().any(|s| s.name == text),
        _ => false,
    };
    if invalid || cx.poisoned.contains(text) {
        return None;
    }
    match kind {
        ParamKind::Slice { elem, .. } | ParamKind::Pinned(elem) | ParamKind::PinnedMut(elem) => {
            let Some(b) = buffer else {
                let msg = match kind_of {
                    Some(k) => format!("{what} takes a buffer, but `{text}` is a {k}"),
                    None => format!(
                        "unknown buffer `{text}` for {what} (buffers: {}){}",
                        list(buffers.iter().map(|b| b.name.as_str())),
                        suggest(text, buffers.iter().map(|b| b.name.as_str()))
                    ),
                };
                cx.diags.error(span, msg);
                return None;
            };
            let buf = &buffers[b];
            if buf.elem != elem {
                cx.diags
                    .error(span, format!("dtype mismatch: buffer `{text}` is {} but {what} takes {elem}", buf.elem));
                return None;
            }
            if let Some(msg) = memory_mismatch(what, kind, text, buf) {
                cx.diags.error(span, msg);
                return None;
            }
            Some(match kind {
                ParamKind::Pinned(_) => Binding::Pinned { buffer: b },
                ParamKind::PinnedMut(_) => Binding::PinnedMut { buffer: b },
                _ => Binding::Buffer { buffer: b, mutable: kind.is_written() },
            })
        }
        ParamKind::Scalar(elem) => {
            if let Some(s) = scalars.iter().position(|s| s.name == text) {
                if scalars[s].elem != elem {
                    cx.diags.error(
                        span,
                        format!("dtype mismatch: scalar `{text}` is {} but {what} takes {elem}", scalars[s].elem),
                    );
                    return None;
                }
                return Some(Binding::Scalar { scalar: s });
            }
            if buffer.is_some() {
                cx.diags.error(span, format!("{what} takes a value, but `{text}` is a buffer"));
                return None;
            }
            let is_name = text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
            if is_name && !cx.dims.contains_key(text) {
                let names: Vec<&str> =
                    cx.dims.keys().chain(scalars.iter().map(|s| &s.name)).map(String::as_str).collect();
                let found = kind_of.map_or(String::new(), |k| format!(" (`{text}` is a {k})"));
                let msg = format!(
                    "unknown dim or scalar `{text}` for {what}{found} (dims and scalars: {}){}",
                    list(names.iter().copied()),
                    suggest(text, names.iter().copied())
                );
                cx.diags.error(span, msg);
                return None;
            }
            let v = cx.whole(&S { v: Num::Expr(text.to_string(), start), span: span.clone() }, what)?;
            let value = int_value(cx.diags, v, &span, elem, what)?;
            Some(Binding::Const { value, src: text.to_string() })
        }
    }
}

/// Why buffer `text` (of `buf`'s role) cannot be bound to a pointer parameter of `kind`, if it
/// cannot: device vs mapped host memory, and whether the role lets the kernel write it.
fn memory_mismatch(what: &str, kind: ParamKind, text: &str, buf: &Buffer) -> Option<String> {
    let (role, elem) = (buf.role.name(), buf.elem);
    match kind {
        ParamKind::Pinned(_) if !buf.role.is_host() => Some(format!(
            "{what} reads mapped host memory, but buffer `{text}` has role `{role}`; give it role `pinned`, `slot` or `pinned_out`"
        )),
        ParamKind::PinnedMut(_) if !buf.role.is_host() => Some(format!(
            "{what} writes mapped host memory, but buffer `{text}` has role `{role}` (device memory); give it role `pinned_out`"
        )),
        ParamKind::PinnedMut(_) if !buf.role.kernel_writable_pinned() => Some(format!(
            "buffer `{text}` has role `{role}`, which the host writes and kernels only read, but {what} writes it; use role `pinned_out` for mapped host memory a kernel writes"
        )),
        ParamKind::Slice { mutable, .. } if buf.role.is_host() => {
            let fix = match (mutable, buf.role.kernel_writable_pinned()) {
                (false, _) => format!("declare the parameter `Pinned<{elem}>`"),
                (true, true) => format!("declare the parameter `PinnedMut<{elem}>`"),
                (true, false) => format!(
                    "kernels only read it; a kernel writes mapped host memory through a `PinnedMut<{elem}>` parameter into a `pinned_out` buffer"
                ),
            };
            Some(format!("{what} takes device memory, but buffer `{text}` is pinned host memory (role `{role}`); {fix}"))
        }
        ParamKind::Slice { mutable: true, .. } if !buf.role.kernel_writable() => Some(format!(
            "buffer `{text}` has role `{role}`, which kernels may not write, but {what} writes it; use role `state`, `scratch` or `output` for a written buffer"
        )),
        _ => None,
    }
}

/// Node order and usage checks on the bound nodes.
pub(crate) fn check_usage(
    cx: &mut Ctx<'_>,
    bound: &Bound,
    buffers: &[Buffer],
    buffer_spans: &[Span],
    scalars: &[Scalar],
    scalar_spans: &[Span],
) {
    let mut written: Vec<bool> = buffers.iter().map(|b| b.role.defined_at_start()).collect();
    let mut used = vec![false; buffers.len()];
    let mut first_writer: Vec<Option<&str>> = vec![None; buffers.len()];
    for node in &bound.nodes {
        for a in &node.args {
            if let Some((buffer, true)) = a.binding.buffer_access() {
                first_writer[buffer].get_or_insert(node.name.as_str());
            }
        }
    }
    for (n, node) in bound.nodes.iter().enumerate() {
        for (i, a) in node.args.iter().enumerate() {
            let Some((b, writes)) = a.binding.buffer_access() else { continue };
            used[b] = true;
            if !writes && !written[b] {
                let later = match first_writer[b] {
                    Some(w) => format!("the first node that writes it is `{w}`, later in the file"),
                    None => "no node writes it".to_string(),
                };
                cx.diags.error(
                    bound.arg_spans[n][i].clone(),
                    format!(
                        "node `{}` reads {} buffer `{}` before anything writes it: nodes run in file order and {later}",
                        node.name,
                        buffers[b].role.name(),
                        buffers[b].name
                    ),
                );
                written[b] = true; // report once per buffer
            }
        }
        for a in &node.args {
            if let Some((buffer, true)) = a.binding.buffer_access() {
                written[buffer] = true;
            }
        }
    }
    for (b, buf) in buffers.iter().enumerate() {
        if !used[b] {
            cx.diags
                .error(buffer_spans[b].clone(), format!("buffer `{}` is not used by any node; remove it", buf.name));
        } else if buf.role.must_be_written() && first_writer[b].is_none() {
            cx.diags.error(
                buffer_spans[b].clone(),
                format!("{} buffer `{}` is never written by any node", buf.role.name(), buf.name),
            );
        }
    }
    for (s, sc) in scalars.iter().enumerate() {
        let is_used = bound.nodes.iter().any(|n| n.args.iter().any(|a| a.binding == Binding::Scalar { scalar: s }));
        if !is_used {
            cx.diags.error(scalar_spans[s].clone(), format!("scalar `{}` is not used by any node; remove it", sc.name));
        }
    }
}

/// The value a constant binding passes (for docs).
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.clone(),
    }
}
