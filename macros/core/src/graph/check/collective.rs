//! Binds collective nodes: `collective = { op, reduce, root, buffer | send + recv }`. The
//! buffers are device memory of a dtype NCCL reduces; lengths follow each op's rule where the
//! world size does not enter (all-reduce and broadcast: equal; reduce-scatter: send a multiple
//! of recv; all-gather: recv a multiple of send); `new` checks the world size itself.

use super::context::Ctx;
use crate::graph::ir::{Arg, Binding, Buffer, CollectiveOp, Node, NodeOp, Reduction};
use crate::graph::spec::diag::{list, suggest};
use crate::graph::spec::{RawCollective, Span, S};
use crate::syntax::model::Elem;

const OPS: [&str; 4] = ["all_reduce", "reduce_scatter", "all_gather", "broadcast"];
/// The element types NCCL reduces (`ncclDataType_t`).
const NCCL_TYPES: [Elem; 10] =
    [Elem::I8, Elem::U8, Elem::I32, Elem::U32, Elem::I64, Elem::U64, Elem::F16, Elem::Bf16, Elem::F32, Elem::F64];

fn buffer<'b>(cx: &mut Ctx<'_>, name: &S<String>, buffers: &'b [Buffer], what: &str) -> Option<(usize, &'b Buffer)> {
    let b = cx.named_buffer(name, buffers, what)?;
    let buf = &buffers[b];
    if buf.role.is_host() || !NCCL_TYPES.contains(&buf.elem) {
        cx.diags.push(
            name.span.clone(),
            format!(
                "{what}: buffer `{}` is {} with role `{}`; a collective takes device memory of a type NCCL reduces ({})",
                buf.name,
                buf.elem,
                buf.role.name(),
                list(NCCL_TYPES.iter().map(|e| e.rust_name()))
            ),
        );
        return None;
    }
    Some((b, buf))
}

fn reduction(cx: &mut Ctx<'_>, c: &S<RawCollective>, op: &str) -> Option<Reduction> {
    let Some(r) = &c.v.reduce else {
        cx.diags.push(c.span.clone(), format!("`{op}` needs `reduce` ({})", list(Reduction::ALL.map(|r| r.1))));
        return None;
    };
    let found = Reduction::ALL.iter().find(|(_, n)| *n == r.v).map(|(r, _)| *r);
    if found.is_none() {
        let names = Reduction::ALL.map(|r| r.1);
        cx.diags.push(
            r.span.clone(),
            format!("unknown reduction `{}` (expected {}){}", r.v, list(names), suggest(&r.v, names)),
        );
    }
    found
}

fn collective_op(cx: &mut Ctx<'_>, c: &S<RawCollective>) -> Option<CollectiveOp> {
    let Some(op) = &c.v.op else {
        cx.diags.push(c.span.clone(), format!("`collective` needs `op` ({})", list(OPS)));
        return None;
    };
    let reduces = matches!(op.v.as_str(), "all_reduce" | "reduce_scatter");
    if !reduces {
        if let Some(r) = &c.v.reduce {
            cx.diags.push(r.span.clone(), format!("`{}` takes no `reduce`", op.v));
            return None;
        }
    }
    if op.v != "broadcast" {
        if let Some(r) = &c.v.root {
            cx.diags.push(r.span.clone(), format!("only `broadcast` takes a `root`, not `{}`", op.v));
            return None;
        }
    }
    match op.v.as_str() {
        "all_reduce" => reduction(cx, c, "all_reduce").map(CollectiveOp::AllReduce),
        "reduce_scatter" => reduction(cx, c, "reduce_scatter").map(CollectiveOp::ReduceScatter),
        "all_gather" => Some(CollectiveOp::AllGather),
        "broadcast" => match &c.v.root {
            None => Some(CollectiveOp::Broadcast(0)),
            Some(r) if (0..=i128::from(u32::MAX)).contains(&r.v) => Some(CollectiveOp::Broadcast(r.v as u32)),
            Some(r) => {
                cx.diags.push(r.span.clone(), format!("`root` = {} is not a rank", r.v));
                None
            }
        },
        other => {
            cx.diags.push(
                op.span.clone(),
                format!("unknown collective `{other}` (expected {}){}", list(OPS), suggest(other, OPS)),
            );
            None
        }
    }
}

/// Rule: the send and receive lengths fit `op` for every world size they can (the world size
/// itself is checked when the communicator exists).
fn lengths_fit(cx: &mut Ctx<'_>, op: CollectiveOp, send: &Buffer, recv: &Buffer, span: &Span) -> bool {
    let (s, r) = (send.len, recv.len);
    let why = match op {
        CollectiveOp::AllReduce(_) | CollectiveOp::Broadcast(_) if s != r => "send and recv must have the same length",
        CollectiveOp::ReduceScatter(_) if r == 0 || s % r != 0 => {
            "send must be a whole multiple of recv (world size x recv)"
        }
        CollectiveOp::AllGather if s == 0 || r % s != 0 => "recv must be a whole multiple of send (world size x send)",
        _ if send.elem != recv.elem => "send and recv must have the same dtype",
        _ => return true,
    };
    cx.diags.push(
        span.clone(),
        format!(
            "`{}` from `{}` ({s} x {}) into `{}` ({r} x {}): {why}",
            op.name(),
            send.name,
            send.elem,
            recv.name,
            recv.elem
        ),
    );
    false
}

/// Binds a collective node named `name` with its argument spans.
pub(crate) fn bind_collective(
    cx: &mut Ctx<'_>,
    name: String,
    c: &S<RawCollective>,
    buffers: &[Buffer],
    doc: Option<String>,
) -> Option<(Node, Vec<Span>)> {
    let op = collective_op(cx, c)?;
    let written = |b: usize, buf: &Buffer, span: &Span, cx: &mut Ctx<'_>| {
        if buf.role.kernel_writable() {
            Some(Binding::Buffer { buffer: b, mutable: true })
        } else {
            let msg = format!(
                "a collective writes buffer `{}`, whose role `{}` the graph may not write; use `state`, `scratch` or `output`",
                buf.name,
                buf.role.name()
            );
            cx.diags.push(span.clone(), msg);
            None
        }
    };
    let (args, spans) = match (&c.v.buffer, &c.v.send, &c.v.recv) {
        (Some(b), None, None) => {
            if !matches!(op, CollectiveOp::AllReduce(_) | CollectiveOp::Broadcast(_)) {
                cx.diags.push(b.span.clone(), format!("`{}` is not in place: give `send` and `recv`", op.name()));
                return None;
            }
            let (i, buf) = buffer(cx, b, buffers, "`collective.buffer`")?;
            let binding = written(i, buf, &b.span, cx)?;
            (vec![Arg { param: "buffer".into(), elem: buf.elem, binding, by_name: false }], vec![b.span.clone()])
        }
        (None, Some(s), Some(r)) => {
            let (si, sb) = (buffer(cx, s, buffers, "`collective.send`"), buffer(cx, r, buffers, "`collective.recv`"));
            let ((si, sb), (ri, rb)) = (si?, sb?);
            if si == ri {
                cx.diags.push(r.span.clone(), "send and recv are the same buffer: use `buffer` for in place");
                return None;
            }
            if !lengths_fit(cx, op, sb, rb, &r.span) {
                return None;
            }
            let binding = written(ri, rb, &r.span, cx)?;
            let send = Arg {
                param: "send".into(),
                elem: sb.elem,
                binding: Binding::Buffer { buffer: si, mutable: false },
                by_name: false,
            };
            (
                vec![send, Arg { param: "recv".into(), elem: rb.elem, binding, by_name: false }],
                vec![s.span.clone(), r.span.clone()],
            )
        }
        _ => {
            cx.diags.push(c.span.clone(), "a collective takes `buffer` (in place) or both `send` and `recv`");
            return None;
        }
    };
    Some((Node { name, op: NodeOp::Collective(op), args, doc, pdl: false }, spans))
}
