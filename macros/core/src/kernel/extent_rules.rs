//! The rules for extents (`x: &[f32; n]`), the dynamic shared memory requirement (`shared =
//! block.x * 4`) and the `unsafe(extents)` promise, one function per rule. They need the declaration only (no `.cu`), so they run, and report, alongside the
//! signature check.

use proc_macro2::Span;

use super::param_error::param_error;
use crate::diagnostics::Ctxt;
use crate::syntax::extent::extent_type;
use crate::syntax::model::{Elem, Extent, ExtentExpr, ExtentFn, ExtentOp, KernelDecl, Param, ParamKind};

/// Checks every extent rule of `decl`, each error going to `cx`; `Err` when any failed.
pub(crate) fn check_extents(decl: &KernelDecl, cx: &mut Ctxt) -> Result<(), ()> {
    let before = cx.len();
    check_extent_names(decl, cx);
    check_promise(decl, cx);
    check_shared_promise(decl, cx);
    check_missing_extents(decl, cx);
    // A literal's type follows from the names it is computed with: only once those are right.
    if cx.len() == before {
        check_literal_ranges(decl, cx);
    }
    check_division_by_zero(decl, cx);
    if cx.len() == before {
        Ok(())
    } else {
        Err(())
    }
}

/// The pointer parameters with their extents.
fn extents(decl: &KernelDecl) -> impl Iterator<Item = (&Param, &Extent)> {
    decl.params.iter().filter_map(|p| p.extent.as_ref().map(|e| (p, e)))
}

/// Every extent and the `shared` requirement, each with how messages name it.
fn requirements(decl: &KernelDecl) -> impl Iterator<Item = (String, &Extent)> {
    let extents = extents(decl).map(|(p, e)| (format!("the extent of `{}`", p.name), e));
    extents.chain(decl.shared.as_ref().map(|s| ("`shared`".to_string(), s)))
}

/// "`batch`, `n`" (the integer scalar parameters), or `None` when there are none.
fn integer_scalar_names(decl: &KernelDecl) -> Option<String> {
    let names: Vec<String> =
        decl.params.iter().filter(|p| p.kind.is_integer_scalar()).map(|p| format!("`{}`", p.name)).collect();
    (!names.is_empty()).then(|| names.join(", "))
}

/// "(here: `batch`, `n`)" or "(this kernel has none: use integer literals)".
fn integer_scalars_hint(decl: &KernelDecl) -> String {
    match integer_scalar_names(decl) {
        Some(names) => format!("(here: {names})"),
        None => "(this kernel has none: use integer literals)".to_string(),
    }
}

/// Rule: an extent (and `shared`) names only integer scalar parameters of the kernel. Each
/// name is reported once, where it is first written (`m * m`, or `m` in two extents, is one
/// mistake).
fn check_extent_names(decl: &KernelDecl, cx: &mut Ctxt) {
    let mut reported: Vec<String> = Vec::new();
    for (what, extent) in requirements(decl) {
        for name in extent.expr.names() {
            if reported.contains(&name.to_string()) {
                continue;
            }
            let why = match decl.param(&name.to_string()) {
                None => format!("`{name}`, which is not a parameter of `{}`", decl.symbol),
                Some(p) if p.kind.is_pointer() => format!("`{name}`, a pointer parameter"),
                Some(p) if !p.kind.is_integer_scalar() => format!("`{name}`, which is `{}`", p.kind.rust_decl()),
                Some(_) => continue,
            };
            reported.push(name.to_string());
            cx.push(
                name.span(),
                format!(
                    "{what} names {why}: an extent is an integer expression over the kernel's integer \
                     scalar parameters {} and the launch's shape (`grid.x` ... `block.z`)",
                    integer_scalars_hint(decl)
                ),
            );
        }
    }
}

/// Rule: extents are trusted only under `unsafe(extents)` (one error, at the first extent).
fn check_promise(decl: &KernelDecl, cx: &mut Ctxt) {
    if decl.extents_promise.is_some() {
        return;
    }
    let Some((param, extent)) = extents(decl).next() else { return };
    cx.push(
        extent.span,
        format!(
            "the extent of `{}` is a promise about what kernel `{}` accesses, and kgraph cannot verify it: \
             make the promise with `unsafe(extents)` in the attribute, `#[kernel(\"{}\", unsafe(extents))]`; \
             then `launch` checks every argument against its extent and is safe to call",
            param.name, decl.symbol, decl.file
        ),
    );
}

/// Rule: `shared` is part of the promise, so it needs `unsafe(extents)`.
fn check_shared_promise(decl: &KernelDecl, cx: &mut Ctxt) {
    let Some(shared) = decl.shared.as_ref().filter(|_| decl.extents_promise.is_none()) else { return };
    cx.push(
        shared.span,
        format!(
            "`shared` is part of the promise about what kernel `{}` accesses: it needs `unsafe(extents)` (and an \
             extent on every pointer parameter), `#[kernel(\"{}\", unsafe(extents), shared = ...)]`",
            decl.symbol, decl.file
        ),
    );
}

/// Rule: under `unsafe(extents)`, every pointer parameter has an extent.
fn check_missing_extents(decl: &KernelDecl, cx: &mut Ctxt) {
    if decl.extents_promise.is_none() {
        return;
    }
    for p in decl.params.iter().filter(|p| p.kind.is_pointer() && p.extent.is_none()) {
        let with_extent = match p.kind {
            ParamKind::Slice { elem, mutable: false } => format!("&[{elem}; ...]"),
            ParamKind::Slice { elem, mutable: true } => format!("&mut [{elem}; ...]"),
            ParamKind::Pinned(elem) => format!("Pinned<[{elem}; ...]>"),
            ParamKind::PinnedMut(elem) => format!("PinnedMut<[{elem}; ...]>"),
            ParamKind::Scalar(_) => unreachable!("filtered to pointers"),
        };
        let message = format!(
            "`unsafe(extents)` needs an extent on every pointer parameter: declare `{}: {with_extent}` with how \
             many elements `{}` may access through `{}`, in terms of {}",
            p.name,
            decl.symbol,
            p.name,
            integer_scalar_names(decl).unwrap_or_else(|| "integer literals".to_string())
        );
        param_error(p, message, cx);
    }
}

/// Rule: every literal of an extent (or of `shared`) fits in the type it is computed in.
fn check_literal_ranges(decl: &KernelDecl, cx: &mut Ctxt) {
    for (what, extent) in requirements(decl) {
        let ty = extent_type(decl, extent);
        let max = match ty {
            Elem::I32 => i32::MAX as u64,
            Elem::U32 => u32::MAX as u64,
            Elem::I64 => i64::MAX as u64,
            _ => u64::MAX,
        };
        for (value, span) in extent.expr.literals() {
            if value > max {
                cx.push(
                    span,
                    format!(
                        "{value} does not fit in `{ty}`, the type {what} is computed in (C's `{}`, from the scalar \
                         parameters it names)",
                        ty.c_name()
                    ),
                );
            }
        }
    }
}

/// Rule: no extent (nor `shared`) divides by a divisor that is zero whatever the launch: a
/// literal `0`, or an expression of literals that folds to 0 (`n / (2 - 2)`). Every launch would
/// otherwise be refused at run time.
fn check_division_by_zero(decl: &KernelDecl, cx: &mut Ctxt) {
    for (what, extent) in requirements(decl) {
        zero_divisors(&extent.expr, &mut |op, divisor| {
            let (verb, folded) = match op {
                ExtentOp::Rem => ("takes a remainder modulo", "`%`"),
                _ => ("divides by", "`/`"),
            };
            let span = first_span(divisor).unwrap_or(extent.span);
            let literal = matches!(divisor, ExtentExpr::Int { .. });
            let how = if literal { String::new() } else { " (the divisor's literals fold to 0)".to_string() };
            cx.push(
                span,
                format!(
                    "{what} (`{}`) {verb} zero{how}: every launch would be refused; the right operand of {folded} \
                     must not be 0",
                    extent.text
                ),
            );
        });
    }
}

/// Calls `found` with every `/` or `%` of `expr` whose divisor folds to 0.
fn zero_divisors<'e>(expr: &'e ExtentExpr, found: &mut dyn FnMut(ExtentOp, &'e ExtentExpr)) {
    match expr {
        ExtentExpr::Binary { op, lhs, rhs } => {
            if matches!(op, ExtentOp::Div | ExtentOp::Rem) && fold(rhs) == Some(0) {
                found(*op, rhs);
            }
            zero_divisors(lhs, found);
            zero_divisors(rhs, found);
        }
        ExtentExpr::Call { a, b, .. } => {
            zero_divisors(a, found);
            zero_divisors(b, found);
        }
        _ => {}
    }
}

/// The value of an expression of literals only (C's truncating `/` and `%`), or `None` when it
/// names a parameter or the launch's shape, divides by zero itself, or leaves `i128`.
fn fold(expr: &ExtentExpr) -> Option<i128> {
    match expr {
        ExtentExpr::Int { value, .. } => Some(i128::from(*value)),
        ExtentExpr::Binary { op, lhs, rhs } => {
            let (a, b) = (fold(lhs)?, fold(rhs)?);
            match op {
                ExtentOp::Add => a.checked_add(b),
                ExtentOp::Sub => a.checked_sub(b),
                ExtentOp::Mul => a.checked_mul(b),
                ExtentOp::Div => a.checked_div(b),
                ExtentOp::Rem => a.checked_rem(b),
            }
        }
        ExtentExpr::Call { func, a, b } => {
            let (a, b) = (fold(a)?, fold(b)?);
            Some(match func {
                ExtentFn::Min => a.min(b),
                ExtentFn::Max => a.max(b),
            })
        }
        _ => None,
    }
}

/// The span of the first token of an expression written in the declaration (a divisor that
/// folds is made of literals, which have spans).
fn first_span(expr: &ExtentExpr) -> Option<Span> {
    match expr {
        ExtentExpr::Int { span, .. } => Some(*span),
        ExtentExpr::Name(name) => Some(name.span()),
        ExtentExpr::Binary { lhs, .. } => first_span(lhs),
        ExtentExpr::Call { a, .. } => first_span(a),
        _ => None,
    }
}
