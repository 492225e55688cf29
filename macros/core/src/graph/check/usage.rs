//! Whole-graph rules on the bound nodes, one function each: nothing is read before it is
//! written (nodes run in file order), every buffer and scalar is used, and every result buffer
//! is written by some node.

use super::bind::Bound;
use super::context::Ctx;
use crate::graph::ir::{Binding, Buffer, Scalar};
use crate::graph::spec::Span;

/// The buffers and scalars with their spans.
pub(crate) type Declared<'a> = (&'a [Buffer], &'a [Span], &'a [Scalar], &'a [Span]);

/// Node order and usage checks on the bound nodes; `conditions` are the buffers the
/// `[[while]]`/`[[if]]` conditions read (used, too).
pub(crate) fn check_usage(cx: &mut Ctx<'_>, bound: &Bound, declared: Declared<'_>, conditions: &[usize]) {
    let (buffers, buffer_spans, scalars, scalar_spans) = declared;
    let first_writer = first_writers(bound, buffers.len());
    no_read_before_write(cx, bound, buffers, &first_writer);
    buffers_used_and_results_written(cx, bound, buffers, buffer_spans, &first_writer, conditions);
    scalars_used(cx, bound, scalars, scalar_spans);
}

/// Per buffer: the first node (in file order) that writes it.
fn first_writers(bound: &Bound, n_buffers: usize) -> Vec<Option<&str>> {
    let mut first_writer: Vec<Option<&str>> = vec![None; n_buffers];
    for node in &bound.nodes {
        for a in &node.args {
            if let Some((buffer, true)) = a.binding.buffer_access() {
                first_writer[buffer].get_or_insert(node.name.as_str());
            }
        }
    }
    first_writer
}

/// No node reads a buffer that holds nothing yet (an output, scratch or pinned_out buffer no
/// earlier node wrote); reported once per buffer.
fn no_read_before_write(cx: &mut Ctx<'_>, bound: &Bound, buffers: &[Buffer], first_writer: &[Option<&str>]) {
    let mut written: Vec<bool> = buffers.iter().map(|b| b.role.defined_at_start()).collect();
    for (n, node) in bound.nodes.iter().enumerate() {
        for (i, a) in node.args.iter().enumerate() {
            let Some((b, writes)) = a.binding.buffer_access() else { continue };
            if !writes && !written[b] {
                let later = match first_writer[b] {
                    Some(w) => format!("the first node that writes it is `{w}`, later in the file"),
                    None => "no node writes it".to_string(),
                };
                cx.diags.push(
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
}

/// Every buffer is passed to some node, and every output and pinned_out buffer is written.
fn buffers_used_and_results_written(
    cx: &mut Ctx<'_>,
    bound: &Bound,
    buffers: &[Buffer],
    buffer_spans: &[Span],
    first_writer: &[Option<&str>],
    conditions: &[usize],
) {
    let mut used = vec![false; buffers.len()];
    for &b in conditions {
        used[b] = true;
    }
    for a in bound.nodes.iter().flat_map(|n| &n.args) {
        if let Some((b, _)) = a.binding.buffer_access() {
            used[b] = true;
        }
    }
    for (b, buf) in buffers.iter().enumerate() {
        if !used[b] {
            cx.diags.push(buffer_spans[b].clone(), format!("buffer `{}` is not used by any node; remove it", buf.name));
        } else if buf.role.must_be_written() && first_writer[b].is_none() {
            cx.diags.push(
                buffer_spans[b].clone(),
                format!("{} buffer `{}` is never written by any node", buf.role.name(), buf.name),
            );
        }
    }
}

/// Every scalar is passed to some node.
fn scalars_used(cx: &mut Ctx<'_>, bound: &Bound, scalars: &[Scalar], scalar_spans: &[Span]) {
    let mut used = vec![false; scalars.len()];
    for a in bound.nodes.iter().flat_map(|n| &n.args) {
        if let Binding::Scalar { scalar } = a.binding {
            used[scalar] = true;
        }
    }
    for (s, sc) in scalars.iter().enumerate() {
        if !used[s] {
            cx.diags.push(scalar_spans[s].clone(), format!("scalar `{}` is not used by any node; remove it", sc.name));
        }
    }
}
