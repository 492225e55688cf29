//! `graph!(.., repeat = K)`: every node of the spec, its included ones too, as the body of one
//! `[[while]] repeat = K` loop named [`REPEAT_LOOP`]. The loop is built here from the spec as
//! spliced (so it wraps included nodes however deep they are), not written into the spec's
//! text, and every error about it is located in the user's file and names `repeat`. Rules, one
//! function each: there are nodes to loop over, no control of the spec (own or included) is in
//! the way (conditional bodies do not nest), and the loop's name is free.

use std::num::NonZeroU32;

use super::bind::Bound;
use super::context::Ctx;
use crate::diagnostics::Location;
use crate::graph::ir::{Control, ControlKind};
use crate::graph::spec::{RawControlKind, RawSpec};

/// The name of the loop `repeat = K` wraps the spec in (a control's name: node and control
/// names are one namespace).
pub const REPEAT_LOOP: &str = "repeat_steps";

/// The loop over every node of `raw` (all bound, in `bound`), or `None` with the reasons
/// reported.
pub(crate) fn repeat_all(cx: &mut Ctx<'_>, raw: &RawSpec, bound: &Bound, k: NonZeroU32) -> Option<Control> {
    let has_nodes = nodes_to_loop_over(cx, bound, k);
    let no_controls = no_control_in_the_way(cx, raw, k);
    let name_free = loop_name_free(cx, raw, k);
    (has_nodes && no_controls && name_free).then(|| Control {
        name: REPEAT_LOOP.to_string(),
        kind: ControlKind::Repeat(k.get()),
        first: 0,
        len: bound.nodes.len(),
        doc: None,
    })
}

/// Rule: the spec has a node.
fn nodes_to_loop_over(cx: &mut Ctx<'_>, bound: &Bound, k: NonZeroU32) -> bool {
    if bound.nodes.is_empty() {
        cx.diags.push(
            Location::SpecFile,
            format!("`graph!(.., repeat = {k})` loops over the spec's nodes, but it has none: add a `[[node]]`, or drop `repeat`"),
        );
    }
    !bound.nodes.is_empty()
}

/// Rule: no `[[while]]`/`[[if]]` of the spec (own, or spliced by an include and then located at
/// it): its body would be inside the loop's, and conditional bodies do not nest.
fn no_control_in_the_way(cx: &mut Ctx<'_>, raw: &RawSpec, k: NonZeroU32) -> bool {
    for c in &raw.controls {
        let kind = match c.kind {
            RawControlKind::While => "`[[while]]`",
            RawControlKind::If => "`[[if]]`",
        };
        let name = c.name.as_ref().map_or("?", |n| n.v.as_str());
        cx.diags.push(
            c.span.clone(),
            format!(
                "`graph!(.., repeat = {k})` puts every node in one `[[while]]` loop, but {kind} `{name}` already runs some of them conditionally, and conditional bodies do not nest: drop `repeat` (and replay the graph {k} times), or drop this {kind}"
            ),
        );
    }
    raw.controls.is_empty()
}

/// Rule: no node is named like the loop.
fn loop_name_free(cx: &mut Ctx<'_>, raw: &RawSpec, k: NonZeroU32) -> bool {
    let mut free = true;
    for n in &raw.nodes {
        let Some(name) = n.name.as_ref().or(n.kernel.as_ref()) else { continue };
        if name.v == REPEAT_LOOP {
            free = false;
            cx.diags.push(
                name.span.clone(),
                format!(
                    "node `{REPEAT_LOOP}` has the name of the loop `graph!(.., repeat = {k})` wraps the spec in (node and control names are one namespace): rename the node"
                ),
            );
        }
    }
    free
}
