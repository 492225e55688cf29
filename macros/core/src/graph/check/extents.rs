//! The extent rules: every launch a graph makes is proven, at compile time, to satisfy the
//! checks its kernel's checked `launch` would make at run time (`docs/safety.md`, "What a
//! checked launch checks"), so that a replay, which runs no launch code, needs none:
//!
//! - every pointer argument's extent, evaluated from the node's arguments (dims and literals
//!   are constants; a scalar counts with its spec default, and `set_<scalar>` re-checks the
//!   extents it feeds), operation by operation in the C types the runtime computes it in, with the same checked
//!   arithmetic, is a number of elements (no overflow, no division by zero, not negative) and
//!   at most the bound buffer's `len`;
//! - the launch has at most 2^31 threads (the runtime's `TooManyThreads`);
//! - a kernel declared with `shared = <bytes>` gets at least that much dynamic shared memory
//!   from the node's `shared`, evaluated over the node's block and arguments (the runtime's
//!   `SharedMemory`).
//!
//! No written argument can overlap another: every buffer is an allocation of its own, passed
//! whole, and `bind` rejects a buffer passed twice to one launch where one parameter writes it.

use super::context::Ctx;
use crate::graph::ir::{Binding, Buffer, Dim3, ExtentUse, Node, Scalar, Value};
use crate::graph::spec::{RawNode, Span};
use crate::syntax::extent::operation_type;
use crate::syntax::model::{Elem, ExtentExpr, ExtentFn, ExtentOp, KernelDecl, Param, ParamKind};
use crate::syntax::naming::ident_text;

/// The most threads one checked launch may have (the runtime's `MAX_THREADS_PER_LAUNCH`).
pub(crate) const MAX_THREADS: u64 = 1 << 31;

/// Why an extent has no value, as the runtime would refuse the launch
/// (`LaunchError::ExtentArithmetic`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    /// An operation leaves the type's range (for unsigned types, goes below zero).
    Overflow {
        /// The operator.
        op: &'static str,
    },
    /// `/` or `%` by zero.
    DivisionByZero {
        /// The operator.
        op: &'static str,
    },
    /// A scalar's value does not convert to the type (a negative value where C converts to
    /// unsigned).
    Conversion {
        /// The parameter.
        name: String,
        /// Its value.
        value: i128,
    },
    /// A literal of the extent does not fit the type (`#[kernel]` rejects this too).
    Literal {
        /// The literal.
        value: u64,
    },
    /// A name has no integer value (cannot happen for a declaration `#[kernel]` accepts).
    Unknown {
        /// The name.
        name: String,
    },
    /// A part's negative value met an unsigned operand: C converts it, wrapping.
    Wrap {
        /// The part's value.
        value: i128,
    },
}

impl Fault {
    /// The fault in a message, for an extent computed in `ty`.
    fn describe(&self, ty: Elem) -> String {
        match self {
            Fault::Overflow { op } => format!("`{op}` overflows `{ty}`"),
            Fault::DivisionByZero { op } => format!("`{op}` divides by zero"),
            Fault::Conversion { name, value } => format!("`{name}` = {value} does not fit in `{ty}`"),
            Fault::Literal { value } => format!("the literal {value} does not fit in `{ty}`"),
            Fault::Unknown { name } => format!("`{name}` has no integer value"),
            Fault::Wrap { value } => format!("{value} would wrap when converted to `{ty}`"),
        }
    }
}

/// The range of an extent type (`I32`, `U32`, `I64` or `U64`).
fn range(ty: Elem) -> (i128, i128) {
    match ty {
        Elem::I32 => (i32::MIN.into(), i32::MAX.into()),
        Elem::U32 => (0, u32::MAX.into()),
        Elem::I64 => (i64::MIN.into(), i64::MAX.into()),
        _ => (0, u64::MAX.into()),
    }
}

/// Evaluates `expr` as the runtime does (`kgraph::__private::extent`): every value converted to `ty`,
/// every operation checked in `ty`, `/` truncating and `%` taking the dividend's sign as in C.
/// `value` gives each name's value.
pub(crate) fn evaluate(expr: &ExtentExpr, ty: Elem, value: &dyn Fn(&str) -> Option<i128>) -> Result<i128, Fault> {
    let (lo, hi) = range(ty);
    let fits = |v: i128| (lo..=hi).contains(&v);
    let named = |name: String| match value(&name) {
        Some(v) if fits(v) => Ok(v),
        Some(v) => Err(Fault::Conversion { name, value: v }),
        None => Err(Fault::Unknown { name }),
    };
    match expr {
        ExtentExpr::Int { value, .. } => {
            let v = i128::from(*value);
            if fits(v) {
                Ok(v)
            } else {
                Err(Fault::Literal { value: *value })
            }
        }
        ExtentExpr::Name(name) => named(ident_text(name)),
        ExtentExpr::Launch { dim, axis, .. } => named(dim.text(*axis).to_string()),
        ExtentExpr::Binary { op, lhs, rhs } => {
            // Left before right, and the first fault wins, as in the runtime's evaluation.
            let (a, b) = (evaluate(lhs, ty, value)?, evaluate(rhs, ty, value)?);
            binary(*op, a, b, ty)
        }
        ExtentExpr::Call { func, a, b } => {
            let (a, b) = (evaluate(a, ty, value)?, evaluate(b, ty, value)?);
            Ok(call(*func, a, b))
        }
    }
}

/// `a op b` checked in `ty` (both already in its range).
fn binary(op: ExtentOp, a: i128, b: i128, ty: Elem) -> Result<i128, Fault> {
    let (lo, hi) = range(ty);
    let fits = |v: i128| (lo..=hi).contains(&v);
    let op_text = op.symbol();
    let v = match op {
        ExtentOp::Add => a + b,
        ExtentOp::Sub => a - b,
        ExtentOp::Mul => a.checked_mul(b).ok_or(Fault::Overflow { op: op_text })?,
        ExtentOp::Div | ExtentOp::Rem if b == 0 => return Err(Fault::DivisionByZero { op: op_text }),
        // i128 `/` truncates and `%` keeps the dividend's sign, as C does.
        ExtentOp::Div => a / b,
        ExtentOp::Rem => {
            // C's `INT_MIN % -1` overflows (it is computed through the division).
            if !fits(a / b) {
                return Err(Fault::Overflow { op: op_text });
            }
            a % b
        }
    };
    if fits(v) {
        Ok(v)
    } else {
        Err(Fault::Overflow { op: op_text })
    }
}

fn call(func: ExtentFn, a: i128, b: i128) -> i128 {
    match func {
        ExtentFn::Min => a.min(b),
        ExtentFn::Max => a.max(b),
    }
}

/// Evaluates `expr` of `decl` as the checked launch does (`kernel/guard.rs`): each operation in
/// the type C computes it in ([`operation_type`]), a part converted to the wider operand's type
/// first (a negative part meeting an unsigned one is [`Fault::Wrap`]); an extent of literals
/// only in `long long` throughout (`syntax::extent::extent_type`). A fault comes with the type it arose in.
pub(crate) fn evaluate_as_c(
    expr: &ExtentExpr,
    decl: &KernelDecl,
    value: &dyn Fn(&str) -> Option<i128>,
) -> Result<i128, (Fault, Elem)> {
    if expr.names().is_empty() && !expr.uses_launch() {
        return evaluate(expr, Elem::I64, value).map_err(|f| (f, Elem::I64));
    }
    let ty = operation_type(decl, expr);
    // A part in the operation's type: a scalar that does not fit is named, as the runtime does.
    let part = |e: &ExtentExpr| {
        let v = evaluate_as_c(e, decl, value)?;
        let (lo, hi) = range(ty);
        match e {
            _ if (lo..=hi).contains(&v) => Ok(v),
            ExtentExpr::Name(name) => Err((Fault::Conversion { name: ident_text(name), value: v }, ty)),
            _ => Err((Fault::Wrap { value: v }, ty)),
        }
    };
    match expr {
        ExtentExpr::Binary { op, lhs, rhs } => {
            let (a, b) = (part(lhs)?, part(rhs)?);
            binary(*op, a, b, ty).map_err(|f| (f, ty))
        }
        ExtentExpr::Call { func, a, b } => {
            let (a, b) = (part(a)?, part(b)?);
            Ok(call(*func, a, b))
        }
        leaf => evaluate(leaf, ty, value).map_err(|f| (f, ty)),
    }
}

/// The value of `grid.x` ... `block.z` in a launch of shape `grid` × `block`; `None` for any
/// other name.
pub(crate) fn launch_value(name: &str, grid: [u32; 3], block: [u32; 3]) -> Option<i128> {
    let (dims, axis) = name.split_once('.')?;
    let dims = match dims {
        "grid" => grid,
        "block" => block,
        _ => return None,
    };
    let axis = match axis {
        "x" => 0,
        "y" => 1,
        "z" => 2,
        _ => return None,
    };
    Some(i128::from(dims[axis]))
}

/// The compile-time value of an argument bound to an integer parameter: a constant, or a
/// scalar's spec default.
pub(crate) fn arg_value(binding: &Binding, scalars: &[Scalar]) -> Option<i128> {
    let value = match binding {
        Binding::Const { value, .. } => value,
        Binding::Scalar { scalar } => &scalars[*scalar].default,
        _ => return None,
    };
    match value {
        Value::Int(v) => Some(*v),
        Value::Float(_) => None,
    }
}

/// `x: &[f32; n]`, `probs: PinnedMut<[f32; batch * 5]>`: the parameter as declared.
pub(crate) fn param_decl(param: &Param, extent: &str) -> String {
    let name = ident_text(&param.name);
    match param.kind {
        ParamKind::Slice { elem, mutable: false } => format!("{name}: &[{elem}; {extent}]"),
        ParamKind::Slice { elem, mutable: true } => format!("{name}: &mut [{elem}; {extent}]"),
        ParamKind::Pinned(elem) => format!("{name}: Pinned<[{elem}; {extent}]>"),
        ParamKind::PinnedMut(elem) => format!("{name}: PinnedMut<[{elem}; {extent}]>"),
        ParamKind::Scalar(elem) => format!("{name}: {elem}"),
    }
}

/// "n = 4096 (the default of scalar `n`), n_in = 40 (`n_in`)": where each name of the extent gets its
/// value in this node.
fn values_text(node: &Node, u: &ExtentUse<'_>, scalars: &[Scalar]) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut parts = Vec::new();
    for name in u.extent.expr.names() {
        let name = ident_text(name);
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        let Some(arg) = node.arg(&name) else { continue };
        let Some(v) = arg_value(&arg.binding, scalars) else { continue };
        parts.push(match &arg.binding {
            Binding::Scalar { scalar } => format!("{name} = {v} (the default of scalar `{}`)", scalars[*scalar].name),
            Binding::Const { src, .. } if *src != v.to_string() && *src != name => format!("{name} = {v} (`{src}`)"),
            _ => format!("{name} = {v}"),
        });
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" with {}", parts.join(", "))
    }
}

/// Rule: every pointer argument of every node holds its parameter's extent, evaluated (without
/// fault) from the node's arguments with scalars at their defaults.
/// `nodes` are the bound nodes, `kernels` theirs, `arg_spans` the span of each node's argument
/// values (`Bound`'s fields).
pub(crate) fn extents_fit_buffers(
    cx: &mut Ctx<'_>,
    nodes: &[Node],
    kernels: &[KernelDecl],
    arg_spans: &[Vec<Span>],
    buffers: &[Buffer],
    scalars: &[Scalar],
) {
    for (n, node) in nodes.iter().enumerate() {
        let Some(k) = node.kernel() else { continue };
        let decl = &kernels[k];
        let shape = node.launch().map(|l| (l.grid.value, l.block.value));
        for u in node.extent_uses(decl) {
            if let Some(msg) = extent_problem(node, decl, &u, shape, buffers, scalars) {
                cx.diags.push(arg_spans[n][u.arg].clone(), msg);
                continue;
            }
            // `autotune` may launch the node at any `tune` candidate, with the grid that keeps its
            // thread count: an extent over the launch's shape must hold at each one too.
            let Some(l) = node.launch().filter(|_| u.extent.expr.uses_launch()) else { continue };
            let threads = u64::from(l.grid.value[0]) * u64::from(l.block.value[0]);
            for &b in &l.tune {
                let grid = u32::try_from(threads.div_ceil(u64::from(b))).unwrap_or(u32::MAX);
                let candidate = Some(([grid, 1, 1], [b, 1, 1]));
                if let Some(msg) = extent_problem(node, decl, &u, candidate, buffers, scalars) {
                    cx.diags.push(arg_spans[n][u.arg].clone(), format!("`tune` candidate {b}: {msg}"));
                }
            }
        }
    }
}

/// What is wrong with one pointer argument's extent, if anything.
fn extent_problem(
    node: &Node,
    decl: &KernelDecl,
    u: &ExtentUse<'_>,
    shape: Option<([u32; 3], [u32; 3])>,
    buffers: &[Buffer],
    scalars: &[Scalar],
) -> Option<String> {
    let value = |name: &str| {
        shape
            .and_then(|(grid, block)| launch_value(name, grid, block))
            .or_else(|| node.arg(name).and_then(|a| arg_value(&a.binding, scalars)))
    };
    let (text, buf) = (&u.extent.text, &buffers[u.buffer]);
    let what = format!(
        "node `{}`: parameter `{}` of kernel `{}`",
        node.name,
        param_decl(u.param, text),
        ident_text(&decl.name)
    );
    let mut values = values_text(node, u, scalars);
    if let Some((grid, block)) = shape.filter(|_| u.extent.expr.uses_launch()) {
        let sep = if values.is_empty() { " with" } else { "," };
        values.push_str(&format!("{sep} grid = {grid:?}, block = {block:?}"));
    }
    let fed: Vec<String> = node.extent_scalars(u.extent).iter().map(|&s| format!("`{}`", scalars[s].name)).collect();
    let defaults = match fed.len() {
        0 => String::new(),
        1 => format!(" or the default of scalar {}", fed[0]),
        _ => format!(" or the defaults of scalars {}", fed.join(", ")),
    };
    match evaluate_as_c(&u.extent.expr, decl, &value) {
        Err((fault, ty)) => Some(format!(
            "{what}: its extent `{text}` cannot be evaluated{values}: {} (extents are computed in the kernel's C \
             type, here `{}`, and a checked launch refuses this one); change the node's arguments{defaults}",
            fault.describe(ty),
            ty.c_name()
        )),
        Ok(v) if v < 0 => Some(format!(
            "{what}: its extent `{text}` is {v}{values}, which is negative (a checked launch refuses it); change the \
             node's arguments{defaults}"
        )),
        Ok(v) if v > i128::from(buf.len) => Some(format!(
            "{what}: its extent `{text}` is {v} elements{values}, but buffer `{}` holds {} (len = `{}`): the kernel \
             may access past its end; give `{}` a `len` of at least {v}, or change the node's arguments{defaults}",
            buf.name, buf.len, buf.len_src, buf.name
        )),
        Ok(_) => None,
    }
}

/// Rule: a node launches at most 2^31 threads (`grid` × `block`), as a checked launch requires
/// (beyond it a thread index computed in C's `int` overflows).
pub(crate) fn threads_within_promise(cx: &mut Ctx<'_>, node: &RawNode, grid: &Dim3, block: &Dim3) {
    let product = |d: &Dim3| d.value.iter().map(|&x| u128::from(x)).product::<u128>();
    let threads = product(grid) * product(block);
    if threads <= u128::from(MAX_THREADS) {
        return;
    }
    let at: Span = node.grid.as_ref().map_or(node.span.clone(), |g| g.span.clone());
    cx.diags.push(
        at,
        format!(
            "`grid` {:?} × `block` {:?} = {threads} threads, more than the 2^31 = {MAX_THREADS} a checked launch \
             allows (a thread index computed in C's `int` would overflow; the launch would fail with \
             `LaunchError::TooManyThreads`)",
            grid.value, block.value
        ),
    );
}

/// Rule: a kernel node whose kernel declares `shared = <bytes>` gives it at least that much
/// dynamic shared memory (`shared` of the node), the requirement evaluated from the node's
/// block (`block.x` ...) and arguments (scalars at their defaults) as the checked launch does;
/// and so does every `tune` candidate block (the autotuner keeps the node's `shared`).
pub(crate) fn shared_memory_fits(cx: &mut Ctx<'_>, raw: &RawNode, decl: &KernelDecl, node: &Node, scalars: &[Scalar]) {
    let (Some(_), Some(launch)) = (&decl.shared, node.launch()) else { return };
    let at = raw.shared.as_ref().map(|s| s.span.clone()).or_else(|| raw.kernel.as_ref().map(|k| k.span.clone()));
    if let Some(problem) = shared_problem(decl, node, launch.block.value, launch.shared, scalars) {
        cx.diags.push(at.unwrap_or_else(|| raw.span.clone()), problem);
        return;
    }
    let tune_at = raw.tune.as_ref().map_or_else(|| raw.span.clone(), |t| t.span.clone());
    for &candidate in &launch.tune {
        if let Some(problem) = shared_problem(decl, node, [candidate, 1, 1], launch.shared, scalars) {
            cx.diags.push(tune_at.clone(), format!("`tune` candidate {candidate}: {problem}"));
        }
    }
}

/// What is wrong with the node's `shared` bytes for its kernel's requirement at `block`, if anything.
fn shared_problem(decl: &KernelDecl, node: &Node, block: [u32; 3], shared: u32, scalars: &[Scalar]) -> Option<String> {
    let need = decl.shared.as_ref()?;
    let [bx, by, bz] = block;
    let grid = node.launch().map_or([1, 1, 1], |l| l.grid.value);
    let value = |name: &str| {
        launch_value(name, grid, block).or_else(|| node.arg(name).and_then(|a| arg_value(&a.binding, scalars)))
    };
    let what = format!(
        "node `{}`: kernel `{}` declares `shared = {}` (dynamic shared memory, bytes)",
        node.name,
        ident_text(&decl.name),
        need.text
    );
    let block = format!("block = [{bx}, {by}, {bz}]");
    match evaluate_as_c(&need.expr, decl, &value) {
        Err((fault, ty)) => Some(format!("{what}, which cannot be evaluated with {block}: {}", fault.describe(ty))),
        Ok(v) if v < 0 => Some(format!("{what}, which is {v} with {block} (negative)")),
        Ok(v) if v > i128::from(shared) => Some(format!(
            "{what}: {v} bytes with {block}, but the node gives `shared = {shared}`; set `shared` to at least {v}"
        )),
        Ok(_) => None,
    }
}
