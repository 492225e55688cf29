//! The step's layout: where each buffer goes (input, output, device memory), the order of the
//! structs' fields, and the nodes' levels. Both back ends read it.

use std::path::Path;

use crate::graph::dataflow::Edge;
use crate::graph::ir::{Buffer, GraphIr, NodeOp, Role};
use crate::syntax::model::Elem;

/// Where a buffer lives in a resident step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepSide {
    /// Host-written each step: a field of the step's input.
    In,
    /// Read back by the host: a field of the step's output.
    Out,
    /// Device memory the graph struct owns: an address in the parameter struct.
    Device,
}

impl StepSide {
    /// The side of a buffer of `role`.
    pub fn of(role: Role) -> Self {
        match role {
            Role::Pinned | Role::Slot | Role::Input => StepSide::In,
            Role::PinnedOut | Role::Output => StepSide::Out,
            Role::Parameter | Role::State | Role::Scratch => StepSide::Device,
        }
    }
}

/// The most bytes of input a step takes: every block keeps a copy in its shared memory.
pub const MAX_IN_BYTES: u64 = 16 * 1024;

/// The most bytes of output a step gives (sent word by word as pairs by one block).
pub const MAX_OUT_BYTES: u64 = 64 * 1024;

/// The step's layout: the fields of its structs in order, and its levels.
#[derive(Debug, Clone)]
pub struct StepLayout {
    /// The input's buffers, in field order (largest element first: no padding).
    pub inputs: Vec<usize>,
    /// The output's buffers, in field order.
    pub outputs: Vec<usize>,
    /// The device buffers the nodes use, in the parameter struct's order (addresses first).
    pub pointers: Vec<usize>,
    /// The scalars the nodes use, after the addresses (largest first).
    pub scalars: Vec<usize>,
    /// The nodes by dataflow level: every node after every node it depends on, a grid barrier
    /// between two levels.
    pub levels: Vec<Vec<usize>>,
}

impl StepLayout {
    /// The layout of `ir` (a lowerable spec: `check::resident` passed) with dependencies `edges`.
    pub fn of(ir: &GraphIr, edges: &[Edge]) -> Self {
        let used = used_buffers(ir);
        let on = |side: StepSide| -> Vec<usize> {
            let v: Vec<usize> = used.iter().copied().filter(|&b| StepSide::of(ir.buffers[b].role) == side).collect();
            struct_fields(&ir.buffers, &v).into_iter().map(|(b, _)| b).collect()
        };
        let mut scalars: Vec<usize> = (0..ir.scalars.len())
            .filter(|&s| {
                ir.nodes
                    .iter()
                    .flat_map(|n| &n.args)
                    .any(|a| a.binding == crate::graph::ir::Binding::Scalar { scalar: s })
            })
            .collect();
        scalars.sort_by_key(|&s| std::cmp::Reverse(elem_size(ir.scalars[s].elem)));
        StepLayout {
            inputs: on(StepSide::In),
            outputs: on(StepSide::Out),
            pointers: on(StepSide::Device),
            scalars,
            levels: levels(ir.nodes.len(), edges),
        }
    }

    /// Bytes of the struct of `buffers` (the input's or the output's fields).
    pub fn struct_bytes(ir: &GraphIr, buffers: &[usize]) -> u64 {
        buffers.iter().map(|&b| ir.buffers[b].len * elem_size(ir.buffers[b].elem)).sum()
    }
}

/// The fields of a step struct holding `fields` (buffers), in the struct's order (largest element
/// first, then declaration order: no padding between whole words), with each one's byte offset.
pub fn struct_fields(buffers: &[Buffer], fields: &[usize]) -> Vec<(usize, u64)> {
    let mut order = fields.to_vec();
    order.sort_by_key(|&b| std::cmp::Reverse(elem_size(buffers[b].elem)));
    let mut at = 0;
    order
        .into_iter()
        .map(|b| {
            let field = (b, at);
            at += buffers[b].len * elem_size(buffers[b].elem);
            field
        })
        .collect()
}

/// How the step's input (in every block's shared memory) and output (in device memory) are
/// aligned: a field at a multiple of this offset is aligned to it.
pub const STRUCT_ALIGN: u64 = 16;

/// A buffer element's size in bytes (1 for what has none: a struct is refused before).
pub fn elem_size(elem: Elem) -> u64 {
    elem.size().map_or(1, |s| s as u64)
}

/// The buffers any node reads or writes, in declaration order.
fn used_buffers(ir: &GraphIr) -> Vec<usize> {
    (0..ir.buffers.len())
        .filter(|&b| {
            ir.nodes.iter().flat_map(|n| &n.args).any(|a| a.binding.buffer_access().is_some_and(|(x, _)| x == b))
        })
        .collect()
}

/// Longest-path levels of a DAG of `n` nodes (edges go from earlier to later nodes in file
/// order, as `dataflow` builds them).
fn levels(n: usize, edges: &[Edge]) -> Vec<Vec<usize>> {
    let mut level = vec![0usize; n];
    for to in 0..n {
        level[to] = edges.iter().filter(|e| e.to == to).map(|e| level[e.from] + 1).max().unwrap_or(0);
    }
    let depth = level.iter().max().map_or(0, |l| l + 1);
    (0..depth).map(|l| (0..n).filter(|&i| level[i] == l).collect()).collect()
}

/// Whether node `n` of `ir` is a copy or a fill (lowered to the grid's own loops).
pub fn is_copy_or_fill(ir: &GraphIr, n: usize) -> bool {
    matches!(ir.nodes[n].op, NodeOp::Memcpy | NodeOp::Memset { .. })
}

/// The file a spec's resident kernel is compiled from and its symbol: `kg_<stem>_resident` (a
/// C identifier whatever the stem starts with).
pub fn resident_symbol(spec_path: &str) -> String {
    let stem = Path::new(spec_path).file_stem().map_or_else(|| "graph".into(), |s| s.to_string_lossy().into_owned());
    let clean: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("kg_{clean}_resident")
}
