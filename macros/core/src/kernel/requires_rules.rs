//! The rules for `requires(<cond>, ...)` and `align(<param> = <bytes>)` in `#[kernel(...)]`,
//! one function per rule. Like the extent rules they need the declaration only.

use crate::diagnostics::Ctxt;
use crate::syntax::model::KernelDecl;

/// Checks every requirement rule of `decl`, each error going to `cx`; `Err` when any failed.
pub(crate) fn check_requirements(decl: &KernelDecl, cx: &mut Ctxt) -> Result<(), ()> {
    let before = cx.len();
    check_promise(decl, cx);
    check_condition_names(decl, cx);
    check_aligned_params(decl, cx);
    if cx.len() == before {
        Ok(())
    } else {
        Err(())
    }
}

/// Rule: `requires` and `align` qualify the `unsafe(extents)` promise, so they need it (one
/// error, at the first of them).
fn check_promise(decl: &KernelDecl, cx: &mut Ctxt) {
    if decl.extents_promise.is_some() {
        return;
    }
    let first = decl.requires.first().map(|r| ("`requires`", r.span));
    let Some((what, span)) = first.or_else(|| decl.align.first().map(|a| ("`align`", a.span))) else { return };
    cx.push(
        span,
        format!(
            "{what} is part of the promise about what kernel `{}` accesses (the extents hold under these conditions): \
             it needs `unsafe(extents)` (and an extent on every pointer parameter), \
             `#[kernel(\"{}\", unsafe(extents), ...)]`",
            decl.symbol, decl.file
        ),
    );
}

/// Rule: a condition names only the kernel's integer scalar parameters (besides the launch's
/// shape and constants). Each name is reported once, where it is first written.
fn check_condition_names(decl: &KernelDecl, cx: &mut Ctxt) {
    let mut reported: Vec<String> = Vec::new();
    for requirement in &decl.requires {
        for name in requirement.cond.names() {
            let text = name.to_string();
            if reported.contains(&text) {
                continue;
            }
            let why = match decl.param(&text) {
                None => format!("`{name}`, which is not a parameter of `{}`", decl.symbol),
                Some(p) if p.kind.is_pointer() => format!("`{name}`, a pointer parameter"),
                Some(p) if !p.kind.is_integer_scalar() => format!("`{name}`, which is `{}`", p.kind.rust_decl()),
                Some(_) => continue,
            };
            reported.push(text);
            let scalars: Vec<String> =
                decl.params.iter().filter(|p| p.kind.is_integer_scalar()).map(|p| format!("`{}`", p.name)).collect();
            let here = if scalars.is_empty() {
                "this kernel has none".to_string()
            } else {
                format!("here: {}", scalars.join(", "))
            };
            cx.push(
                name.span(),
                format!(
                    "`requires({})` names {why}: a condition is over the kernel's integer scalar parameters ({here}), \
                     the launch's shape (`grid.x` ... `block.z`) and integer constants",
                    requirement.text
                ),
            );
        }
    }
}

/// Rule: `align` names pointer parameters of the kernel.
fn check_aligned_params(decl: &KernelDecl, cx: &mut Ctxt) {
    for align in &decl.align {
        let name = align.param.to_string();
        let why = match decl.param(&name) {
            None => format!("`{name}` is not a parameter of `{}`", decl.symbol),
            Some(p) if !p.kind.is_pointer() => format!("`{name}` is `{}`, not a pointer", p.kind.rust_decl()),
            Some(_) => continue,
        };
        cx.push(
            align.span,
            format!(
                "`align({name} = {})`: {why}; `align` names pointer parameters whose address the kernel needs aligned",
                align.bytes
            ),
        );
    }
}
