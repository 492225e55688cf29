//! Binds each `[[node]]` to its kernel's declared signature: every parameter gets exactly one
//! argument of the right kind and dtype, roles allow what the kernel does to each buffer, no
//! written buffer is aliased. Node order and usage are judged afterwards, in `usage`.

use std::collections::BTreeMap;

use super::context::{Ctx, NameKind};
use super::launch::launch;
use super::values::{int_value, same_dtype, typed_value};
use crate::graph::ir::{Arg, Binding, Buffer, KernelLaunch, Node, NodeOp, Scalar};
use crate::graph::spec::diag::{list, suggest};
use crate::graph::spec::{ArgValue, Lit, Num, RawArgs, RawNode, RawSpec, Span, S};
use crate::syntax::model::{Elem, KernelDecl, Param, ParamKind};
use crate::syntax::naming::{ident_text, is_snake_ident};
use crate::syntax::text::decl_signature;

/// Nodes bound to kernels, with the spans later checks report on.
pub(crate) struct Bound {
    /// The kernels used, each once, in order of first use.
    pub kernels: Vec<KernelDecl>,
    /// The bound nodes (only those that bound without error).
    pub nodes: Vec<Node>,
    /// Per bound node: the span of each argument's value, in parameter order.
    pub arg_spans: Vec<Vec<Span>>,
}

impl Bound {
    /// The index of `decl` in `kernels`, added on first use.
    fn kernel_index(&mut self, decl: &KernelDecl) -> usize {
        match self.kernels.iter().position(|d| d.name == decl.name) {
            Some(k) => k,
            None => {
                self.kernels.push(decl.clone());
                self.kernels.len() - 1
            }
        }
    }
}

/// What nodes can refer to: the declared kernels, and the buffers and scalars that validated
/// (indexed by name: a large spec looks names up once per argument).
pub(crate) struct Env<'a> {
    pub decls: &'a [KernelDecl],
    pub buffers: &'a [Buffer],
    pub scalars: &'a [Scalar],
    buffer_index: BTreeMap<&'a str, usize>,
    scalar_index: BTreeMap<&'a str, usize>,
}

impl<'a> Env<'a> {
    pub fn new(decls: &'a [KernelDecl], buffers: &'a [Buffer], scalars: &'a [Scalar]) -> Self {
        // The first of a name wins, as a search in declaration order would find it.
        let mut buffer_index = BTreeMap::new();
        for (i, b) in buffers.iter().enumerate() {
            buffer_index.entry(b.name.as_str()).or_insert(i);
        }
        let mut scalar_index = BTreeMap::new();
        for (i, s) in scalars.iter().enumerate() {
            scalar_index.entry(s.name.as_str()).or_insert(i);
        }
        Env { decls, buffers, scalars, buffer_index, scalar_index }
    }
}

/// Binds every node; errors go to `cx.diags`.
pub(crate) fn bind_nodes(cx: &mut Ctx<'_>, raw: &RawSpec, env: &Env<'_>) -> Bound {
    let mut out = Bound { kernels: Vec::new(), nodes: Vec::new(), arg_spans: Vec::new() };
    let mut node_names: BTreeMap<String, Span> = BTreeMap::new();
    if raw.nodes.is_empty() {
        cx.diags.push(0..0, "the spec has no nodes: add at least one `[[node]]` table");
    }
    for node in &raw.nodes {
        bind_node(cx, raw, node, env, &mut node_names, &mut out);
    }
    out
}

/// Rule: a graph launches its kernels through their checked `launch_with`, which only a
/// declaration with extents under `unsafe(extents)` has (without, `launch` is `unsafe`).
fn unchecked_kernel(cx: &mut Ctx<'_>, kernel: &S<String>, decl: &KernelDecl) {
    if decl.has_checked_launch() {
        return;
    }
    cx.diags.push(
        kernel.span.clone(),
        format!(
            "kernel `{}` is declared without extents, so its `launch` is `unsafe` and a graph cannot launch it: \
             give every pointer parameter its extent (`x: &[f32; n]`) and add `unsafe(extents)` to its `#[kernel]`",
            kernel.v
        ),
    );
}

/// Binds one node into `out` when it binds without error.
fn bind_node(
    cx: &mut Ctx<'_>,
    raw: &RawSpec,
    node: &RawNode,
    env: &Env<'_>,
    node_names: &mut BTreeMap<String, Span>,
    out: &mut Bound,
) {
    if node.memset.is_some() || node.memcpy.is_some() || node.collective.is_some() || node.gemm.is_some() {
        let name = match &node.name {
            Some(n) => {
                let (n, ok) = node_name(cx, node, n, node_names);
                ok.then_some(n.v)
            }
            None if node.gemm.is_some() => {
                cx.diags.push(node.span.clone(), "a gemm node needs a `name`");
                None
            }
            None => {
                cx.diags.push(node.span.clone(), "a memset, memcpy or collective node needs a `name`");
                None
            }
        };
        if let Some((bound, spans)) = super::copies::bind_copy_node(cx, node, name, env.buffers, env.scalars) {
            out.nodes.push(bound);
            out.arg_spans.push(spans);
        }
        return;
    }
    let Some(kernel) = &node.kernel else {
        cx.diags.push(
            node.span.clone(),
            "node has no `kernel` (the name of a `#[kernel]` declaration), `memset`, `memcpy`, `collective` or `gemm`",
        );
        return;
    };
    let decl = env.decls.iter().find(|d| ident_text(&d.name) == kernel.v);
    let (name, name_ok) = node_name(cx, node, kernel, node_names);
    let launch = launch(cx, node);
    let Some(decl) = decl else {
        unknown_kernel(cx, kernel, env.decls);
        return;
    };
    unchecked_kernel(cx, kernel, decl);
    let Some((args, spans)) = bind_args(cx, node, kernel, decl, env) else { return };
    let (Some(grid), Some(block), Some(shared), Some(tune), true) =
        (launch.grid, launch.block, launch.shared, launch.tune, name_ok)
    else {
        return;
    };
    let kernel = out.kernel_index(decl);
    let pdl = node.pdl.as_ref().or(raw.pdl.as_ref()).is_some_and(|p| p.v);
    let op = NodeOp::Kernel(KernelLaunch { kernel, grid, block, shared, tune });
    let bound = Node { name: name.v, op, args, doc: node.doc.clone(), pdl };
    super::extents::shared_memory_fits(cx, node, decl, &bound, env.scalars);
    super::block_bound::block_within_bound(cx, node, decl, &bound);
    super::requires::requirements_hold(cx, node, decl, &bound, env.scalars);
    out.nodes.push(bound);
    out.arg_spans.push(spans);
}

/// The node's name (its kernel's when not given), and whether it is a fresh snake_case name.
fn node_name(
    cx: &mut Ctx<'_>,
    node: &RawNode,
    kernel: &S<String>,
    node_names: &mut BTreeMap<String, Span>,
) -> (S<String>, bool) {
    let name = node.name.clone().unwrap_or_else(|| kernel.clone());
    let ok = if !is_snake_ident(&name.v) {
        cx.diags.push(name.span.clone(), format!("node name `{}` must be a lowercase snake_case identifier", name.v));
        false
    } else if node_names.contains_key(&name.v) {
        let hint = if node.name.is_none() { "; give the nodes distinct `name`s" } else { "" };
        cx.diags.push(name.span.clone(), format!("duplicate node name `{}`{hint}", name.v));
        false
    } else {
        node_names.insert(name.v.clone(), name.span.clone());
        true
    };
    (name, ok)
}

fn unknown_kernel(cx: &mut Ctx<'_>, kernel: &S<String>, decls: &[KernelDecl]) {
    let names: Vec<String> = decls.iter().map(|d| ident_text(&d.name)).collect();
    cx.diags.push(
        kernel.span.clone(),
        format!(
            "unknown kernel `{}` (declared kernels: {}){}",
            kernel.v,
            list(names.iter().map(String::as_str)),
            suggest(&kernel.v, names.iter().map(String::as_str))
        ),
    );
}

/// The node's arguments in parameter order with the span of each value, or `None` when any is
/// wrong (reported).
fn bind_args(
    cx: &mut Ctx<'_>,
    node: &RawNode,
    kernel: &S<String>,
    decl: &KernelDecl,
    env: &Env<'_>,
) -> Option<(Vec<Arg>, Vec<Span>)> {
    let sig = decl_signature(decl);
    let (given, written) = arguments(cx, node, kernel, decl);
    let mut ok = arguments_match_parameters(cx, node, kernel, decl, &given, &sig);
    let mut args = Vec::new();
    let mut spans = Vec::new();
    for p in &decl.params {
        let pname = ident_text(&p.name);
        let Some(at) = given.iter().position(|(k, _)| k.v == pname) else { continue };
        let (value, by_name) = (&given[at].1, at >= written);
        let mut what = format!("parameter `{pname}: {}` of `{}`", p.kind.rust_decl(), kernel.v);
        if by_name {
            what += " (bound by name: not in `args`, it takes the spec's name it shares)";
        }
        if let Some(null) = bind_null(cx, &what, p, value) {
            match null {
                Some(binding) => {
                    args.push(Arg { param: pname, elem: p.kind.elem(), binding, by_name });
                    spans.push(value.span.clone());
                }
                None => ok = false,
            }
            continue;
        }
        match bind_one(cx, &what, p.kind, value, env) {
            Some(binding) => {
                args.push(Arg { param: pname, elem: p.kind.elem(), binding, by_name });
                spans.push(value.span.clone());
            }
            None => ok = false,
        }
    }
    if !ok {
        return None;
    }
    no_written_buffer_aliased(cx, &args, &spans, env.buffers, &sig).then_some((args, spans))
}

/// The node's arguments: those written in `args` (the first `.1` of them, in file order), then,
/// for each parameter not written whose name the spec declares (a dim, buffer or scalar), that
/// name: the parameter is bound by name (the value's span is the node's `kernel`). A written
/// entry always wins, and names are one namespace, so a parameter's name means one thing.
fn arguments(cx: &Ctx<'_>, node: &RawNode, kernel: &S<String>, decl: &KernelDecl) -> (RawArgs, usize) {
    let mut given: RawArgs = node.args.as_ref().map(|a| a.v.clone()).unwrap_or_default();
    let written = given.len();
    for p in &decl.params {
        let pname = ident_text(&p.name);
        let declared = cx.names.contains_key(&pname) && !cx.poisoned.contains(&pname);
        if declared && !given[..written].iter().any(|(k, _)| k.v == pname) {
            let value = S { v: ArgValue::Str(pname.clone(), None), span: kernel.span.clone() };
            given.push((S { v: pname, span: kernel.span.clone() }, value));
        }
    }
    (given, written)
}

/// `"null"`: `Some(Some(Binding::Null))` for a parameter declared `Option<..>` (the kernel
/// accepts NULL), `Some(None)` (reported) for any other; `None` when the argument is not
/// `"null"`. A spec cannot declare a buffer named `null`, so the word is never a buffer.
fn bind_null(cx: &mut Ctx<'_>, what: &str, param: &Param, value: &S<ArgValue>) -> Option<Option<Binding>> {
    if !matches!(&value.v, ArgValue::Str(s, _) if s == "null") {
        return None;
    }
    if param.nullable {
        return Some(Some(Binding::Null));
    }
    cx.diags.push(
        value.span.clone(),
        format!(
            "{what} takes no `\"null\"`: only a pointer the kernel accepts as NULL does, declared \
             `{}: Option<{}>` (then `None` passes a null pointer)",
            ident_text(&param.name),
            param.kind.rust_decl()
        ),
    );
    Some(None)
}

/// Every argument names a parameter, and every parameter has an argument (written, or by name).
fn arguments_match_parameters(
    cx: &mut Ctx<'_>,
    node: &RawNode,
    kernel: &S<String>,
    decl: &KernelDecl,
    given: &[(S<String>, S<ArgValue>)],
    sig: &str,
) -> bool {
    let params: Vec<String> = decl.params.iter().map(|p| ident_text(&p.name)).collect();
    let mut ok = true;
    for (key, _) in given {
        if !params.contains(&key.v) {
            ok = false;
            cx.diags.push(
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
        let fix = "write each in `args`, or name a dim, buffer or scalar of the spec like its parameter (it then binds by name)";
        cx.diags.push(at, format!("missing argument(s) {} for kernel `{sig}`: {fix}", list(missing)));
    }
    ok
}

/// A buffer passed to a `&mut` or `PinnedMut` parameter is passed nowhere else in the launch.
fn no_written_buffer_aliased(cx: &mut Ctx<'_>, args: &[Arg], spans: &[Span], buffers: &[Buffer], sig: &str) -> bool {
    let mut ok = true;
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
                cx.diags.push(
                    spans[j].clone(),
                    format!(
                        "buffer `{}` is passed to both `{}` and `{}` of kernel `{sig}`, and one of them is {writer}: a written buffer must not be aliased",
                        buffers[x].name, a.param, b.param
                    ),
                );
            }
        }
    }
    ok
}

/// A name (or expression) given as an argument, with what the spec declares under it.
struct NamedArg<'t> {
    text: &'t str,
    /// Where the text starts in the file, when it maps back exactly.
    start: Option<usize>,
    span: Span,
    /// The buffer of that name, if one validated.
    buffer: Option<usize>,
    /// What the name was declared as, if anything.
    kind: Option<NameKind>,
}

/// What the argument `value` binds parameter `kind` to; `what` names the parameter in messages.
fn bind_one(cx: &mut Ctx<'_>, what: &str, kind: ParamKind, value: &S<ArgValue>, env: &Env<'_>) -> Option<Binding> {
    let span = value.span.clone();
    let (text, start) = match &value.v {
        ArgValue::Str(s, start) => (s.as_str(), *start),
        ArgValue::Lit(lit) => return bind_literal(cx, what, kind, &S { v: lit.clone(), span }),
        ArgValue::Other(ty) => {
            cx.diags
                .push(span, format!("{what}: an argument is a name, an expression over dims or a number, found {ty}"));
            return None;
        }
    };
    let buffer = env.buffer_index.get(text).copied();
    let arg = NamedArg { text, start, span, buffer, kind: cx.names.get(text).map(|(k, _)| *k) };
    // Declared, but its declaration had an error (already reported): nothing more to say.
    let invalid = match arg.kind {
        Some(NameKind::Buffer) => buffer.is_none(),
        Some(NameKind::Scalar) => !env.scalar_index.contains_key(text),
        _ => false,
    };
    if invalid || cx.poisoned.contains(text) {
        return None;
    }
    match kind {
        ParamKind::Slice { elem, .. } | ParamKind::Pinned(elem) | ParamKind::PinnedMut(elem) => {
            bind_buffer(cx, what, kind, elem, &arg, env.buffers)
        }
        ParamKind::Scalar(elem) => bind_value(cx, what, elem, &arg, env),
    }
}

/// A number: a constant for a value parameter, never a buffer.
fn bind_literal(cx: &mut Ctx<'_>, what: &str, kind: ParamKind, lit: &S<Lit>) -> Option<Binding> {
    let ParamKind::Scalar(elem) = kind else {
        cx.diags.push(lit.span.clone(), format!("{what} takes a buffer name, found a number"));
        return None;
    };
    let value = typed_value(cx.diags, lit, elem, what)?;
    let src = match &lit.v {
        Lit::Int(v) => v.to_string(),
        Lit::Float(t) => t.clone(),
    };
    Some(Binding::Const { value, src })
}

/// A buffer for a pointer parameter: it exists, has the element type, and lives in the memory
/// (device or mapped host) with the access the parameter needs.
fn bind_buffer(
    cx: &mut Ctx<'_>,
    what: &str,
    kind: ParamKind,
    elem: Elem,
    arg: &NamedArg<'_>,
    buffers: &[Buffer],
) -> Option<Binding> {
    let (text, span) = (arg.text, arg.span.clone());
    let Some(b) = arg.buffer else {
        let msg = match arg.kind {
            Some(k) => format!("{what} takes a buffer, but `{text}` is a {k}"),
            None => format!(
                "unknown buffer `{text}` for {what} (buffers: {}){}",
                list(buffers.iter().map(|b| b.name.as_str())),
                suggest(text, buffers.iter().map(|b| b.name.as_str()))
            ),
        };
        cx.diags.push(span, msg);
        return None;
    };
    let buf = &buffers[b];
    if !same_dtype(buf.elem, elem) {
        cx.diags.push(span, format!("dtype mismatch: buffer `{text}` is {} but {what} takes {elem}", buf.elem));
        return None;
    }
    if let Some(msg) = memory_mismatch(what, kind, text, buf) {
        cx.diags.push(span, msg);
        return None;
    }
    Some(match kind {
        ParamKind::Pinned(_) => Binding::Pinned { buffer: b },
        ParamKind::PinnedMut(_) => Binding::PinnedMut { buffer: b },
        _ => Binding::Buffer { buffer: b, mutable: kind.is_written() },
    })
}

/// A value parameter: a scalar (updatable between replays) of its element type, or a constant
/// (a dim or an expression over dims) that fits it.
fn bind_value(cx: &mut Ctx<'_>, what: &str, elem: Elem, arg: &NamedArg<'_>, env: &Env<'_>) -> Option<Binding> {
    let (text, span, scalars) = (arg.text, arg.span.clone(), env.scalars);
    if let Some(&s) = env.scalar_index.get(text) {
        if !same_dtype(scalars[s].elem, elem) {
            cx.diags
                .push(span, format!("dtype mismatch: scalar `{text}` is {} but {what} takes {elem}", scalars[s].elem));
            return None;
        }
        return Some(Binding::Scalar { scalar: s });
    }
    if arg.buffer.is_some() {
        cx.diags.push(span, format!("{what} takes a value, but `{text}` is a buffer"));
        return None;
    }
    let is_name = text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    if is_name && !cx.dims.contains_key(text) {
        let names: Vec<&str> = cx.dims.keys().chain(scalars.iter().map(|s| &s.name)).map(String::as_str).collect();
        let found = arg.kind.map_or(String::new(), |k| format!(" (`{text}` is a {k})"));
        let msg = format!(
            "unknown dim or scalar `{text}` for {what}{found} (dims and scalars: {}){}",
            list(names.iter().copied()),
            suggest(text, names.iter().copied())
        );
        cx.diags.push(span, msg);
        return None;
    }
    let v = cx.whole(&S { v: Num::Expr(text.to_string(), arg.start), span: span.clone() }, what)?;
    let value = int_value(cx.diags, v, &span, elem, what)?;
    Some(Binding::Const { value, src: text.to_string() })
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
