//! Binds the nodes that are not kernels: `memset = { dst, value }` and `memcpy = { src, dst }`.
//! Their buffers become ordinary arguments (`dst` written, `src` read), so the dataflow, the
//! usage rules and the generated updates treat them like kernel arguments.

use super::context::Ctx;
use super::values::typed_value;
use crate::graph::ir::{Arg, Binding, Buffer, Node, NodeOp, Scalar, Value};
use crate::graph::spec::{Lit, RawMemcpy, RawMemset, RawNode, Span, S};
use crate::syntax::model::Elem;

/// Keys that only a kernel node takes, present on a memset or memcpy node.
fn kernel_only_keys(cx: &mut Ctx<'_>, node: &RawNode, what: &str) -> bool {
    let mut ok = true;
    let spans = [
        ("kernel", node.kernel.as_ref().map(|k| k.span.clone())),
        ("grid", node.grid.as_ref().map(|g| g.span.clone())),
        ("block", node.block.as_ref().map(|b| b.span.clone())),
        ("shared", node.shared.as_ref().map(|s| s.span.clone())),
        ("args", node.args.as_ref().map(|a| a.span.clone())),
        ("pdl", node.pdl.as_ref().map(|p| p.span.clone())),
        ("tune", node.tune.as_ref().map(|t| t.span.clone())),
    ];
    for (key, span) in spans {
        if let Some(span) = span {
            ok = false;
            cx.diags.push(span, format!("a {what} node takes no `{key}` (it launches no kernel)"));
        }
    }
    ok
}

/// The written side of a memset or memcpy: device memory kernels may write, or `pinned_out`.
fn written(cx: &mut Ctx<'_>, b: usize, buf: &Buffer, span: &Span, what: &str) -> Option<Binding> {
    if buf.role.kernel_writable() {
        return Some(Binding::Buffer { buffer: b, mutable: true });
    }
    if buf.role.kernel_writable_pinned() {
        return Some(Binding::PinnedMut { buffer: b });
    }
    cx.diags.push(
        span.clone(),
        format!(
            "{what} writes buffer `{}`, whose role `{}` the graph may not write; use role `state`, `scratch`, `output` or `pinned_out`",
            buf.name,
            buf.role.name()
        ),
    );
    None
}

/// The read side of a memcpy: any buffer, device or mapped host memory.
fn read(b: usize, buf: &Buffer) -> Binding {
    if buf.role.is_host() {
        Binding::Pinned { buffer: b }
    } else {
        Binding::Buffer { buffer: b, mutable: false }
    }
}

/// A memset's element size and bit pattern for `value` in `elem`, or why it has none.
fn memset_pattern(value: &Value, elem: Elem) -> Result<(u32, u32), String> {
    let size = elem.size().ok_or_else(|| format!("{elem} has no fixed size"))?;
    let bits: u64 = match (value, elem) {
        (Value::Float(t), Elem::F32) => {
            u64::from(t.replace('_', "").parse::<f32>().map_err(|e| e.to_string())?.to_bits())
        }
        (Value::Float(t), Elem::F64) => t.replace('_', "").parse::<f64>().map_err(|e| e.to_string())?.to_bits(),
        (Value::Int(v), _) => (*v as i64) as u64,
        (Value::Float(_), _) => return Err(format!("a float for {elem}")),
    };
    match size {
        1 | 2 | 4 => {
            let mask = if size == 4 { u64::from(u32::MAX) } else { (1u64 << (8 * size)) - 1 };
            Ok(((bits & mask) as u32, size as u32))
        }
        _ if bits == 0 => Ok((0, 1)),
        _ => Err(format!(
            "a memset sets elements of 1, 2 or 4 bytes; {elem} has {size}, so only the value 0 (all bytes zero) can be set"
        )),
    }
}

/// Binds a memset node; pushes it to `out` when it binds.
fn bind_memset(
    cx: &mut Ctx<'_>,
    name: String,
    m: &S<RawMemset>,
    buffers: &[Buffer],
    doc: Option<String>,
) -> Option<(Node, Vec<Span>)> {
    let Some(dst) = &m.v.dst else {
        cx.diags.push(m.span.clone(), "`memset` needs `dst`, the buffer to set");
        return None;
    };
    let b = cx.named_buffer(dst, buffers, "`memset.dst`")?;
    let buf = &buffers[b];
    let binding = written(cx, b, buf, &dst.span, "a memset")?;
    let lit = m.v.value.clone().unwrap_or(S { v: Lit::Int(0), span: m.span.clone() });
    let what = format!("`memset.value` for buffer `{}`", buf.name);
    let value = typed_value(cx.diags, &lit, buf.elem, &what)?;
    let (pattern, elem_size) = match memset_pattern(&value, buf.elem) {
        Ok(p) => p,
        Err(why) => {
            cx.diags.push(lit.span.clone(), format!("{what}: {why}"));
            return None;
        }
    };
    let args = vec![Arg { param: "dst".into(), elem: buf.elem, binding, by_name: false }];
    Some((
        Node { name, op: NodeOp::Memset { value, pattern, elem_size }, args, doc, pdl: false },
        vec![dst.span.clone()],
    ))
}

/// Binds a memcpy node; pushes it to `out` when it binds.
fn bind_memcpy(
    cx: &mut Ctx<'_>,
    name: String,
    m: &S<RawMemcpy>,
    buffers: &[Buffer],
    doc: Option<String>,
) -> Option<(Node, Vec<Span>)> {
    let (Some(src), Some(dst)) = (&m.v.src, &m.v.dst) else {
        cx.diags.push(m.span.clone(), "`memcpy` needs `src` and `dst`, the buffers to copy from and into");
        return None;
    };
    let (s, d) = (cx.named_buffer(src, buffers, "`memcpy.src`"), cx.named_buffer(dst, buffers, "`memcpy.dst`"));
    let (s, d) = (s?, d?);
    let (sb, db) = (&buffers[s], &buffers[d]);
    if s == d {
        cx.diags.push(dst.span.clone(), format!("`memcpy` copies buffer `{}` onto itself", sb.name));
        return None;
    }
    if sb.elem != db.elem || sb.len != db.len {
        cx.diags.push(
            dst.span.clone(),
            format!(
                "`memcpy` from `{}` ({} x {}) into `{}` ({} x {}): the buffers must have the same dtype and length",
                sb.name, sb.len, sb.elem, db.name, db.len, db.elem
            ),
        );
        return None;
    }
    let write = written(cx, d, db, &dst.span, "a memcpy")?;
    let args = vec![
        Arg { param: "src".into(), elem: sb.elem, binding: read(s, sb), by_name: false },
        Arg { param: "dst".into(), elem: db.elem, binding: write, by_name: false },
    ];
    Some((Node { name, op: NodeOp::Memcpy, args, doc, pdl: false }, vec![src.span.clone(), dst.span.clone()]))
}

/// Binds `node`, a memset, memcpy, collective or gemm node, with its argument spans; `name` is
/// its validated name (`None`: invalid, reported).
pub(crate) fn bind_copy_node(
    cx: &mut Ctx<'_>,
    node: &RawNode,
    name: Option<String>,
    buffers: &[Buffer],
    scalars: &[Scalar],
) -> Option<(Node, Vec<Span>)> {
    let kinds = usize::from(node.memset.is_some())
        + usize::from(node.memcpy.is_some())
        + usize::from(node.collective.is_some())
        + usize::from(node.gemm.is_some());
    if kinds > 1 {
        cx.diags.push(node.span.clone(), "a node is one of `memset`, `memcpy`, `collective` and `gemm`, not several");
        return None;
    }
    if let Some(c) = &node.collective {
        let keys_ok = kernel_only_keys(cx, node, "collective");
        return super::collective::bind_collective(cx, name?, c, buffers, node.doc.clone()).filter(|_| keys_ok);
    }
    if let Some(g) = &node.gemm {
        let keys_ok = kernel_only_keys(cx, node, "gemm");
        return super::gemm::bind_gemm(cx, name?, g, buffers, scalars, node.doc.clone()).filter(|_| keys_ok);
    }
    let (what, memset, memcpy) = match (&node.memset, &node.memcpy) {
        (Some(m), None) => ("memset", Some(m), None),
        (None, Some(m)) => ("memcpy", None, Some(m)),
        _ => return None,
    };
    let keys_ok = kernel_only_keys(cx, node, what);
    let name = name?;
    if !keys_ok {
        return None;
    }
    match (memset, memcpy) {
        (Some(m), _) => bind_memset(cx, name, m, buffers, node.doc.clone()),
        (_, Some(m)) => bind_memcpy(cx, name, m, buffers, node.doc.clone()),
        _ => None,
    }
}
