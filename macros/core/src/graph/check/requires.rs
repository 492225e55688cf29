//! Rule: every kernel node meets its kernel's `requires(...)` conditions, evaluated at compile
//! time from the node's `grid`, `block` and arguments (scalars at their spec defaults), exactly
//! as the checked launch evaluates them at run time (`LaunchError::Requirement`), and so does
//! every `tune` candidate (the block it tries, with the grid that keeps the node's threads).
//! `set_<scalar>` and `set_launch` check them again before they change anything, through the
//! handle's `__requires` (see `emit/accessors.rs`).
//!
//! `align(param = bytes)` needs no rule here: a graph struct passes every buffer whole, each its
//! own allocation, and CUDA allocations (device and mapped pinned memory alike) start at a
//! multiple of 256 bytes, the most `align` may ask (`MAX_ALIGN`). The launch checks it anyway.

use super::context::Ctx;
use super::extents::{arg_value, launch_value};
use crate::graph::ir::{Binding, Node, Scalar};
use crate::graph::spec::{RawNode, Span};
use crate::syntax::model::{KernelDecl, Requirement};
use crate::syntax::naming::ident_text;

/// Reports each condition of `decl` that node `node` (bound from `raw`), or one of its `tune`
/// candidates, does not meet.
pub(crate) fn requirements_hold(cx: &mut Ctx<'_>, raw: &RawNode, decl: &KernelDecl, node: &Node, scalars: &[Scalar]) {
    let Some(launch) = node.launch() else { return };
    let (grid, block) = (launch.grid.value, launch.block.value);
    for requirement in &decl.requires {
        if let Some(values) = unmet(requirement, node, grid, block, scalars) {
            let at = location(raw, requirement);
            cx.diags.push(at, message(node, decl, requirement, &values, None));
            continue;
        }
        // `autotune` launches the node at each candidate block, its grid keeping the thread count.
        let threads = u64::from(grid[0]) * u64::from(block[0]);
        for &b in &launch.tune {
            let grid = [u32::try_from(threads.div_ceil(u64::from(b))).unwrap_or(u32::MAX), 1, 1];
            if let Some(values) = unmet(requirement, node, grid, [b, 1, 1], scalars) {
                let at = raw.tune.as_ref().map_or_else(|| raw.span.clone(), |t| t.span.clone());
                cx.diags.push(at, message(node, decl, requirement, &values, Some(b)));
            }
        }
    }
}

/// The values of the condition's names where it is false ("n = -1 (the default of scalar
/// `n`), block.x = 128"), or `None` where it holds.
fn unmet(
    requirement: &Requirement,
    node: &Node,
    grid: [u32; 3],
    block: [u32; 3],
    scalars: &[Scalar],
) -> Option<String> {
    let value = |name: &str| {
        launch_value(name, grid, block).or_else(|| node.arg(name).and_then(|a| arg_value(&a.binding, scalars)))
    };
    if requirement.cond.holds(&value) {
        return None;
    }
    let shown: Vec<String> = requirement
        .cond
        .value_names()
        .iter()
        .map(|name| match (value(name), node.arg(name).map(|a| &a.binding)) {
            (Some(v), Some(Binding::Scalar { scalar })) => {
                format!("{name} = {v} (the default of scalar `{}`)", scalars[*scalar].name)
            }
            (Some(v), _) => format!("{name} = {v}"),
            (None, _) => format!("{name} has no integer value"),
        })
        .collect();
    Some(shown.join(", "))
}

fn message(node: &Node, decl: &KernelDecl, requirement: &Requirement, values: &str, candidate: Option<u32>) -> String {
    let what = match candidate {
        Some(b) => format!("`tune` candidate {b} of node `{}`", node.name),
        None => format!("node `{}`", node.name),
    };
    format!(
        "{what}: kernel `{}` requires `{}`, which does not hold with {values} (its extents are promised only where it \
         holds; a checked launch refuses this one with `LaunchError::Requirement`); change the node's launch shape or \
         arguments",
        ident_text(&decl.name),
        requirement.text
    )
}

/// Where a failed condition is reported: the node's `block` (or `grid`) when the condition names
/// it, else the first argument it names, else the node's `kernel`.
fn location(raw: &RawNode, requirement: &Requirement) -> Span {
    let launch = requirement.cond.value_names();
    let dims = |prefix: &str| launch.iter().any(|n| n.starts_with(prefix));
    let shape = if dims("block.") { raw.block.as_ref() } else { None };
    let shape = shape.or(if dims("grid.") { raw.grid.as_ref() } else { None });
    if let Some(s) = shape {
        return s.span.clone();
    }
    let arg = raw.args.as_ref().and_then(|args| {
        requirement.cond.names().iter().find_map(|n| args.v.iter().find(|(k, _)| k.v == ident_text(n)))
    });
    match (arg, &raw.kernel) {
        (Some((_, value)), _) => value.span.clone(),
        (None, Some(k)) => k.span.clone(),
        (None, None) => raw.span.clone(),
    }
}
