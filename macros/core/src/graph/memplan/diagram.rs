//! The memory plan drawn beside the dataflow (`kgraph dot --plan`): a cluster with one box per
//! planned buffer (its arena offset and size, by offset) and one per scratch buffer left out
//! (and why), each joined by dotted lines to the nodes that use it.

use super::{BufferPlan, MemoryPlan};
use crate::graph::ir::{GraphIr, Role};

/// `dot` (a `digraph { ... }` of the dataflow, node `n<i>` per spec node) with the plan added.
pub fn with_plan(dot: &str, ir: &GraphIr, plan: &MemoryPlan) -> String {
    let body = dot.trim_end().strip_suffix('}').unwrap_or(dot);
    let mut s = body.to_string();
    s += &format!(
        "  subgraph cluster_memory_plan {{\n    label=\"memory plan: arena {} bytes\";\n    style=dashed;\n",
        plan.arena_bytes
    );
    let mut rows: Vec<(usize, String)> = Vec::new();
    for (b, p) in plan.buffers.iter().enumerate() {
        let name = &ir.buffers[b].name;
        match p {
            BufferPlan::Arena(slot) => rows.push((b, format!("{name}\\n@{} +{} B", slot.offset, slot.bytes))),
            BufferPlan::Own(why) if ir.buffers[b].role == Role::Scratch => {
                rows.push((b, format!("{name}\\nown allocation: {}", why.text().replace('"', "\\\""))))
            }
            BufferPlan::Own(_) => {}
        }
    }
    rows.sort_by_key(|(b, _)| plan.slot(*b).map_or(u64::MAX, |s| s.offset));
    for (b, label) in &rows {
        let style = if plan.slot(*b).is_some() { "shape=note" } else { "shape=note, style=dashed" };
        s += &format!("    m_{} [label=\"{label}\", {style}];\n", ir.buffers[*b].name);
    }
    s += "  }\n";
    for (b, _) in &rows {
        for n in (0..ir.nodes.len()).filter(|&n| ir.accesses(n).iter().any(|&(x, _)| x == *b)) {
            s += &format!("  m_{} -> n{n} [style=dotted, arrowhead=none];\n", ir.buffers[*b].name);
        }
    }
    s += "}\n";
    s
}
