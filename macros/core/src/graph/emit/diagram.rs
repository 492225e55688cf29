//! The spec's dataflow as diagrams: Graphviz DOT and Mermaid. Kernel nodes are boxes joined by
//! the reduced dependency edges (labelled with the buffers and hazards behind them); host-side
//! buffers (everything but scratch) are drawn with dashed data edges to the nodes that read them
//! and from the nodes that write them. Programmatic (PDL) edges of the captured graph are bold
//! (DOT) or thick (Mermaid) and labelled `PDL`. A node's label lists the parameters it binds by
//! name (not written in its `args`).

use crate::graph::dataflow::Edge;
use crate::graph::ir::{GraphIr, Role};

fn edge_label(ir: &GraphIr, e: &Edge) -> String {
    let parts: Vec<String> = e.causes.iter().map(|(b, h)| format!("{} {}", ir.buffer_label(*b), h.name())).collect();
    parts.join(", ")
}

/// A node's label: its name and kernel, and the parameters bound by name, if any (what the
/// spec does not write is shown).
fn node_label(ir: &GraphIr, n: usize, line_break: &str) -> String {
    let node = &ir.nodes[n];
    let by_name: Vec<&str> = node.args.iter().filter(|a| a.by_name).map(|a| a.param.as_str()).collect();
    let mut label = format!("{}{line_break}{}", node.name, ir.node_label(n));
    if !by_name.is_empty() {
        label += &format!("{line_break}by name: {}", by_name.join(", "));
    }
    label
}

fn buffer_label(ir: &GraphIr, b: usize) -> String {
    let buf = &ir.buffers[b];
    format!("{}: {} {}[{}]", buf.name, buf.role.name(), buf.elem, buf.len)
}

/// Data edges between host-visible buffers and nodes: `(buffer, node, buffer_to_node)`, by
/// buffer, then node, a read before a write. One pass over the nodes' accesses.
fn data_edges(ir: &GraphIr) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    for n in 0..ir.nodes.len() {
        for (b, writes) in ir.accesses(n) {
            let Some(buf) = ir.buffers.get(b) else { continue }; // the communicator
            let role = buf.role;
            if role == Role::Scratch {
                continue;
            }
            if !writes || role == Role::State {
                out.push((b, n, true));
            }
            if writes {
                out.push((b, n, false));
            }
        }
    }
    out.sort_by_key(|&(b, n, to_node)| (b, n, !to_node));
    out
}

/// The label of edge `e`, marked when the captured graph makes it programmatic.
fn labelled(ir: &GraphIr, e: &Edge, programmatic: &[(usize, usize)]) -> (String, bool) {
    // `programmatic` is sorted (`Schedule::programmatic_edges`).
    let pdl = programmatic.binary_search(&(e.from, e.to)).is_ok();
    let label = edge_label(ir, e);
    if pdl {
        (format!("{label} (PDL)"), true)
    } else {
        (label, false)
    }
}

/// Graphviz DOT source.
pub fn dot(ir: &GraphIr, graph_name: &str, edges: &[Edge], programmatic: &[(usize, usize)]) -> String {
    let mut s = format!("digraph {graph_name} {{\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n");
    for i in 0..ir.nodes.len() {
        s += &format!("  n{i} [label=\"{}\"];\n", node_label(ir, i, "\\n"));
    }
    for (b, buf) in ir.buffers.iter().enumerate() {
        if buf.role != Role::Scratch {
            s += &format!("  b_{} [label=\"{}\", shape=ellipse, style=dashed];\n", buf.name, buffer_label(ir, b));
        }
    }
    for e in edges {
        let (label, pdl) = labelled(ir, e, programmatic);
        let style = if pdl { ", style=bold" } else { "" };
        s += &format!("  n{} -> n{} [label=\"{label}\"{style}];\n", e.from, e.to);
    }
    for (b, n, into) in data_edges(ir) {
        let name = &ir.buffers[b].name;
        if into {
            s += &format!("  b_{name} -> n{n} [style=dashed];\n");
        } else {
            s += &format!("  n{n} -> b_{name} [style=dashed];\n");
        }
    }
    s += "}\n";
    s
}

/// Mermaid flowchart source.
pub fn mermaid(ir: &GraphIr, edges: &[Edge], programmatic: &[(usize, usize)]) -> String {
    let mut s = String::from("flowchart TD\n");
    for i in 0..ir.nodes.len() {
        s += &format!("  n{i}[\"{}\"]\n", node_label(ir, i, "<br/>"));
    }
    for (b, buf) in ir.buffers.iter().enumerate() {
        if buf.role != Role::Scratch {
            s += &format!("  b_{}([\"{}\"])\n", buf.name, buffer_label(ir, b));
        }
    }
    for e in edges {
        let (label, pdl) = labelled(ir, e, programmatic);
        let arrow = if pdl { "==>" } else { "-->" };
        s += &format!("  n{} {arrow}|\"{label}\"| n{}\n", e.from, e.to);
    }
    for (b, n, into) in data_edges(ir) {
        let name = &ir.buffers[b].name;
        if into {
            s += &format!("  b_{name} -.-> n{n}\n");
        } else {
            s += &format!("  n{n} -.-> b_{name}\n");
        }
    }
    s
}
