//! Binds GEMM nodes: `gemm = { a, b, c, m, n, k, trans_a, trans_b, lda, ldb, ldc, alpha, beta,
//! compute, batch }`, row-major `C = alpha * op(A) * op(B) + beta * C` through cuBLAS. One rule
//! per function: the buffers (device memory, C writable, one dtype cuBLAS multiplies), the
//! accumulation (`compute`, explicit for f32), the sizes, the leading dimensions, the extents
//! proof (every element the product touches, batches included, inside its buffer), no C
//! overlapping A or B, and alpha/beta (f32 constants or scalars).

use super::context::Ctx;
use super::values::typed_value;
use crate::graph::ir::{Arg, Binding, Buffer, GemmBatch, GemmCompute, GemmOp, Node, NodeOp, Scalar, Value};
use crate::graph::spec::diag::{list, suggest};
use crate::graph::spec::{ArgValue, Lit, Num, RawBatch, RawGemm, Span, S};
use crate::syntax::model::Elem;

/// The element types a GEMM node multiplies (A, B and C alike).
const GEMM_TYPES: [Elem; 3] = [Elem::F32, Elem::F16, Elem::Bf16];
/// cuBLAS takes sizes and leading dimensions as C `int`s.
const INT_MAX: i128 = i32::MAX as i128;

/// One operand as bound: its buffer and the span its name is written at.
struct Operand<'b> {
    index: usize,
    buf: &'b Buffer,
    span: Span,
}

/// Binds a GEMM node named `name` with its argument spans.
pub(crate) fn bind_gemm(
    cx: &mut Ctx<'_>,
    name: String,
    g: &S<RawGemm>,
    buffers: &[Buffer],
    scalars: &[Scalar],
    doc: Option<String>,
) -> Option<(Node, Vec<Span>)> {
    let what = format!("gemm node `{name}`");
    let [a, b, c] = operands(cx, g, buffers, &what)?;
    let elem = dtypes_match(cx, &what, [&a, &b, &c])?;
    let compute = compute(cx, g, elem, &what);
    let alpha = factor(cx, (&g.v.alpha, &g.span), scalars, Value::Int(1), "alpha", &what);
    let beta = factor(cx, (&g.v.beta, &g.span), scalars, Value::Int(0), "beta", &what);
    let op = shape(cx, g, &what)?;
    let (compute, alpha, beta) = (compute?, alpha?, beta?);
    let reads_c = match &beta.0 {
        Binding::Scalar { .. } => true,
        Binding::Const { value, .. } => !is_zero(value),
        _ => true,
    };
    let op = GemmOp { compute, reads_c, ..op };
    if !extents_fit(cx, &op, [&a, &b, &c], &what) | !c_is_apart(cx, [&a, &b, &c], &what) {
        return None;
    }
    let buffer = |o: &Operand<'_>, mutable: bool, param: &str| Arg {
        param: param.into(),
        elem,
        binding: Binding::Buffer { buffer: o.index, mutable },
        by_name: false,
    };
    let value = |(binding, _): &(Binding, Span), param: &str| Arg {
        param: param.into(),
        elem: Elem::F32,
        binding: binding.clone(),
        by_name: false,
    };
    let mut args = vec![buffer(&a, false, "a"), buffer(&b, false, "b"), buffer(&c, true, "c")];
    args.extend([value(&alpha, "alpha"), value(&beta, "beta")]);
    let mut spans = vec![a.span.clone(), b.span.clone(), c.span.clone(), alpha.1, beta.1];
    if reads_c {
        args.push(buffer(&c, false, "c"));
        spans.push(c.span.clone());
    }
    Some((Node { name, op: NodeOp::Gemm(op), args, doc, pdl: false }, spans))
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Int(i) => *i == 0,
        Value::Float(t) => t.replace('_', "").parse::<f64>().is_ok_and(|f| f == 0.0),
    }
}

/// Rule: `a`, `b` and `c` name device buffers, and the graph may write `c`.
fn operands<'b>(cx: &mut Ctx<'_>, g: &S<RawGemm>, buffers: &'b [Buffer], what: &str) -> Option<[Operand<'b>; 3]> {
    let (Some(a), Some(b), Some(c)) = (&g.v.a, &g.v.b, &g.v.c) else {
        let missing: Vec<&str> = [("a", &g.v.a), ("b", &g.v.b), ("c", &g.v.c)]
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| *k)
            .collect();
        cx.diags.push(
            g.span.clone(),
            format!(
                "{what} needs `a`, `b` and `c` (the buffers of C = alpha * op(A) * op(B) + beta * C); {} missing",
                list(missing)
            ),
        );
        return None;
    };
    let mut out = Vec::new();
    for (key, name) in [("a", a), ("b", b), ("c", c)] {
        let Some(index) = cx.named_buffer(name, buffers, &format!("`gemm.{key}` of {what}")) else { continue };
        let buf = &buffers[index];
        let problem = if buf.role.is_host() {
            Some("a gemm reads and writes device memory, not mapped host memory".to_string())
        } else if key == "c" && !buf.role.kernel_writable() {
            Some("a gemm writes C, and the graph may not write this role; use `state`, `scratch` or `output`".into())
        } else {
            None
        };
        if let Some(why) = problem {
            cx.diags.push(
                name.span.clone(),
                format!("{what}: `{key}` is buffer `{}` with role `{}`: {why}", buf.name, buf.role.name()),
            );
            continue;
        }
        out.push(Operand { index, buf, span: name.span.clone() });
    }
    out.try_into().ok()
}

/// Rule: A, B and C have one dtype, one cuBLAS multiplies here (f32, f16, bf16).
fn dtypes_match(cx: &mut Ctx<'_>, what: &str, ops: [&Operand<'_>; 3]) -> Option<Elem> {
    let [a, b, c] = ops;
    for o in [b, c] {
        if o.buf.elem != a.buf.elem {
            cx.diags.push(
                o.span.clone(),
                format!(
                    "{what}: buffer `{}` is {}, but A (`{}`) is {}: A, B and C must have the same dtype",
                    o.buf.name, o.buf.elem, a.buf.name, a.buf.elem
                ),
            );
            return None;
        }
    }
    if !GEMM_TYPES.contains(&a.buf.elem) {
        cx.diags.push(
            a.span.clone(),
            format!(
                "{what}: buffer `{}` is {}; a gemm multiplies {} matrices",
                a.buf.name,
                a.buf.elem,
                list(GEMM_TYPES.iter().map(|e| e.rust_name()))
            ),
        );
        return None;
    }
    Some(a.buf.elem)
}

/// Rule: `compute` is `f32` or `tf32`; given for f32 buffers (IEEE or TF32 is a choice the
/// spec states), `f32` (the default) for f16 and bf16.
fn compute(cx: &mut Ctx<'_>, g: &S<RawGemm>, elem: Elem, what: &str) -> Option<GemmCompute> {
    const NAMES: [&str; 2] = ["f32", "tf32"];
    let Some(c) = &g.v.compute else {
        if elem == Elem::F32 {
            cx.diags.push(
                g.span.clone(),
                format!(
                    "{what} multiplies f32 matrices and needs `compute`: `\"f32\"` (IEEE products and sums) or \
                     `\"tf32\"` (TF32 products on tensor cores, f32 sums); kgraph does not choose the precision for you"
                ),
            );
            return None;
        }
        return Some(GemmCompute::F32);
    };
    let found = match c.v.as_str() {
        "f32" => GemmCompute::F32,
        "tf32" => GemmCompute::Tf32,
        other => {
            let msg = format!("{what}: unknown compute `{other}` (expected {}){}", list(NAMES), suggest(other, NAMES));
            cx.diags.push(c.span.clone(), msg);
            return None;
        }
    };
    if found == GemmCompute::Tf32 && elem != Elem::F32 {
        cx.diags.push(
            c.span.clone(),
            format!("{what}: `compute = \"tf32\"` is for f32 matrices; {elem} products accumulate in f32 (`\"f32\"`)"),
        );
        return None;
    }
    Some(found)
}

/// Rule: alpha and beta are f32 constants or the names of f32 scalars (changeable between
/// replays); `default` when not given. Returns the binding and the span it is written at (the
/// `gemm` table's when not given).
fn factor(
    cx: &mut Ctx<'_>,
    (given, table): (&Option<S<ArgValue>>, &Span),
    scalars: &[Scalar],
    default: Value,
    key: &str,
    what: &str,
) -> Option<(Binding, Span)> {
    let Some(v) = given else {
        let src = default.text();
        return Some((Binding::Const { value: default, src }, table.clone()));
    };
    let place = format!("`gemm.{key}` of {what}");
    match &v.v {
        ArgValue::Lit(lit) => {
            let value = typed_value(cx.diags, &S { v: lit.clone(), span: v.span.clone() }, Elem::F32, &place)?;
            let src = match lit {
                Lit::Int(i) => i.to_string(),
                Lit::Float(t) => t.clone(),
            };
            Some((Binding::Const { value, src }, v.span.clone()))
        }
        ArgValue::Str(name, _) => {
            let Some(s) = scalars.iter().position(|s| s.name == *name) else {
                let names = scalars.iter().map(|s| s.name.as_str());
                cx.diags.push(
                    v.span.clone(),
                    format!(
                        "{place}: unknown scalar `{name}` (a number, or one of the scalars: {}){}",
                        list(names.clone()),
                        suggest(name, names)
                    ),
                );
                return None;
            };
            if scalars[s].elem != Elem::F32 {
                cx.diags.push(
                    v.span.clone(),
                    format!("{place}: scalar `{name}` is {}; alpha and beta are f32", scalars[s].elem),
                );
                return None;
            }
            Some((Binding::Scalar { scalar: s }, v.span.clone()))
        }
        ArgValue::Other(t) => {
            cx.diags.push(v.span.clone(), format!("{place} must be a number or a scalar's name, found {t}"));
            None
        }
    }
}

/// A size: a whole number from 1 to `i32::MAX` (cuBLAS's `int`), or `None` (reported).
fn size(cx: &mut Ctx<'_>, n: &S<Num>, key: &str, what: &str, min: i128) -> Option<u64> {
    let v = cx.whole(n, &format!("`{key}` of {what}"))?;
    if v < min || v > INT_MAX {
        cx.diags.push(n.span.clone(), format!("{what}: `{key}` = {v} must be from {min} to {INT_MAX} (cuBLAS's int)"));
        return None;
    }
    Some(v as u64)
}

/// Rule: m, n, k (and the batch count) are at least 1; each `ld` is at least its row length
/// (default: the row length, packed); strides default to one packed matrix.
fn shape(cx: &mut Ctx<'_>, g: &S<RawGemm>, what: &str) -> Option<GemmOp> {
    let req = |cx: &mut Ctx<'_>, n: &Option<S<Num>>, key: &str| match n {
        Some(n) => size(cx, n, key, what, 1),
        None => {
            cx.diags.push(g.span.clone(), format!("{what} needs `{key}`"));
            None
        }
    };
    let (m, n, k) = (req(cx, &g.v.m, "m"), req(cx, &g.v.n, "n"), req(cx, &g.v.k, "k"));
    let (m, n, k) = (m?, n?, k?);
    let (trans_a, trans_b) = (g.v.trans_a.as_ref().is_some_and(|t| t.v), g.v.trans_b.as_ref().is_some_and(|t| t.v));
    // (stored rows, row length) of A, B and C.
    let a = if trans_a { (k, m) } else { (m, k) };
    let b = if trans_b { (n, k) } else { (k, n) };
    let mut ld = |given: &Option<S<Num>>, key: &str, matrix: &str, (rows, row): (u64, u64)| -> Option<u64> {
        let Some(l) = given else { return Some(row) };
        let v = size(cx, l, key, what, 1)?;
        if v < row {
            let msg = format!(
                "{what}: `{key}` = {v} is less than the row length of {matrix} ({rows} x {row} row-major): rows would overlap"
            );
            cx.diags.push(l.span.clone(), msg);
            return None;
        }
        Some(v)
    };
    let (lda, ldb, ldc) = (ld(&g.v.lda, "lda", "A", a), ld(&g.v.ldb, "ldb", "B", b), ld(&g.v.ldc, "ldc", "C", (m, n)));
    let (lda, ldb, ldc) = (lda?, ldb?, ldc?);
    let packed = [a.0 * lda, b.0 * ldb, m * ldc];
    let batch = match &g.v.batch {
        Some(bt) => Some(batch(cx, bt, packed, what)?),
        None => None,
    };
    let compute = GemmCompute::F32; // set by the caller
    Some(GemmOp { compute, trans_a, trans_b, m, n, k, lda, ldb, ldc, batch, reads_c: false })
}

/// Rule: a batch has a `count` of at least 1; strides (default one packed matrix each) are
/// whole numbers of at least 0.
fn batch(cx: &mut Ctx<'_>, bt: &S<RawBatch>, packed: [u64; 3], what: &str) -> Option<GemmBatch> {
    let Some(count) = &bt.v.count else {
        cx.diags.push(bt.span.clone(), format!("{what}: `batch` needs `count`, the number of products"));
        return None;
    };
    let count = size(cx, count, "batch.count", what, 1);
    let mut stride = |s: &Option<S<Num>>, key: &str, packed: u64| match s {
        Some(s) => size(cx, s, key, what, 0),
        None => Some(packed),
    };
    let sa = stride(&bt.v.stride_a, "batch.stride_a", packed[0]);
    let sb = stride(&bt.v.stride_b, "batch.stride_b", packed[1]);
    let sc = stride(&bt.v.stride_c, "batch.stride_c", packed[2]);
    Some(GemmBatch { count: count?, stride_a: sa?, stride_b: sb?, stride_c: sc? })
}

/// Rule (the extents proof): every element the product touches lies inside its buffer: for
/// each of A, B and C, `(rows - 1) * ld + row length` elements, plus `(count - 1) * stride` for
/// a batch; and no two products of a batch write one element of C. The first that fails is
/// reported.
fn extents_fit(cx: &mut Ctx<'_>, op: &GemmOp, ops: [&Operand<'_>; 3], what: &str) -> bool {
    let a = if op.trans_a { (op.k, op.m) } else { (op.m, op.k) };
    let b = if op.trans_b { (op.n, op.k) } else { (op.k, op.n) };
    let batch = op.batch.unwrap_or(GemmBatch { count: 1, stride_a: 0, stride_b: 0, stride_c: 0 });
    let shapes = [
        ("A", a, op.lda, batch.stride_a, "lda", "stride_a"),
        ("B", b, op.ldb, batch.stride_b, "ldb", "stride_b"),
        ("C", (op.m, op.n), op.ldc, batch.stride_c, "ldc", "stride_c"),
    ];
    for (o, (matrix, (rows, row), ld, stride, ld_key, stride_key)) in ops.into_iter().zip(shapes) {
        // At most 2^31 * 2^31 + 2^31 * 2^62: within u128.
        let one = u128::from(rows - 1) * u128::from(ld) + u128::from(row);
        let need = one + u128::from(batch.count - 1) * u128::from(stride);
        if need > u128::from(o.buf.len) {
            let batched = if batch.count > 1 {
                format!(" plus {} more matrices {stride_key} = {stride} apart", batch.count - 1)
            } else {
                String::new()
            };
            let msg = format!(
                "{what}: {matrix} is {rows} x {row} row-major with {ld_key} = {ld}{batched}, touching {need} elements, \
                 but buffer `{}` holds {} ({})",
                o.buf.name, o.buf.len, o.buf.len_src
            );
            cx.diags.push(o.span.clone(), msg);
            // One mistake (a `k` too large, say) can overrun A and B alike: one error.
            return false;
        }
    }
    let c_span = (op.m - 1) * op.ldc + op.n;
    if batch.count > 1 && batch.stride_c < c_span {
        let msg = format!(
            "{what}: `batch.stride_c` = {} is less than one C matrix's span ({c_span} elements): two products of the \
             batch would write the same elements of `{}`",
            batch.stride_c, ops[2].buf.name
        );
        cx.diags.push(ops[2].span.clone(), msg);
        return false;
    }
    true
}

/// Rule: C is neither A nor B (cuBLAS reads A and B while it writes C); A and B may be one
/// buffer.
fn c_is_apart(cx: &mut Ctx<'_>, ops: [&Operand<'_>; 3], what: &str) -> bool {
    let [a, b, c] = ops;
    for (key, o) in [("a", a), ("b", b)] {
        if o.index == c.index {
            cx.diags.push(
                c.span.clone(),
                format!(
                    "{what}: C is buffer `{}`, which is also `{key}`: cuBLAS reads {} while it writes C, so they must \
                     not overlap; write into another buffer",
                    c.buf.name,
                    key.to_uppercase()
                ),
            );
            return false;
        }
    }
    true
}
