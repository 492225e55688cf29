//! The build plan of a graph constructed through the driver's graph API: its top-level units
//! (a node, or a `[[while]]`/`[[if]]` with its body) with the edges into each, and each body's
//! nodes with theirs; which edges are programmatic. Two plans: `branched` (the reduced
//! dataflow) and `serialized` (file order, one path). Code generation only reads them.

use crate::graph::dataflow::dependencies_of;
use crate::graph::ir::{merge_access, GraphIr, NodeOp};

/// A top-level unit of the built graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A node outside every control.
    Node(usize),
    /// A control (index into `GraphIr::controls`) and its body.
    Control(usize),
}

/// An edge into a unit or a body node: the source (a unit index at top level, a node index in
/// a body) and whether it is programmatic.
pub type PlanEdge = (usize, bool);

/// One control's body: each node with its in-body edges, and the sinks (nodes no other body
/// node depends on), which the loop's control kernel follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyPlan {
    /// `(node, edges into it from body nodes)`, in file order.
    pub nodes: Vec<(usize, Vec<PlanEdge>)>,
    /// Body nodes nothing in the body depends on.
    pub sinks: Vec<usize>,
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildPlan {
    /// `(unit, edges into it from earlier units)`, in file order.
    pub units: Vec<(Unit, Vec<PlanEdge>)>,
    /// Per control (indexed like `GraphIr::controls`), its body.
    pub bodies: Vec<BodyPlan>,
}

impl BuildPlan {
    /// The programmatic node-to-node edges `(from, to)` of the plan, sorted.
    pub fn programmatic_edges(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (unit, edges) in &self.units {
            if let Unit::Node(to) = unit {
                for &(from, prog) in edges {
                    if let (true, Unit::Node(from)) = (prog, self.units[from].0) {
                        out.push((from, *to));
                    }
                }
            }
        }
        for body in &self.bodies {
            for (to, edges) in &body.nodes {
                out.extend(edges.iter().filter(|e| e.1).map(|&(from, _)| (from, *to)));
            }
        }
        out.sort_unstable();
        out
    }
}

/// An edge `from → to` between nodes of one graph level may be programmatic: both launch
/// kernels and `to` is a PDL node (its kernel waits on its grid dependency first).
fn programmatic(ir: &GraphIr, from: usize, to: usize) -> bool {
    let kernel = |n: usize| matches!(ir.nodes[n].op, NodeOp::Kernel(_));
    kernel(from) && kernel(to) && ir.nodes[to].pdl
}

/// The top-level units in file order.
fn units(ir: &GraphIr) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut n = 0;
    while n < ir.nodes.len() {
        match ir.control_of(n) {
            Some(c) => {
                out.push(Unit::Control(c));
                n = ir.controls[c].body().end;
            }
            None => {
                out.push(Unit::Node(n));
                n += 1;
            }
        }
    }
    out
}

/// What a unit reads and writes: its node's accesses, or its body's with the condition's
/// buffer read (by the control kernel).
fn unit_accesses(ir: &GraphIr, unit: Unit) -> Vec<(usize, bool)> {
    match unit {
        Unit::Node(n) => ir.accesses(n),
        Unit::Control(c) => {
            let control = &ir.controls[c];
            let mut acc: Vec<(usize, bool)> = Vec::new();
            let cond = control.condition_buffer().map(|b| (b, false));
            for (b, w) in control.body().flat_map(|n| ir.accesses(n)).chain(cond) {
                merge_access(&mut acc, b, w);
            }
            acc
        }
    }
}

/// The edges of a path through `n` items (each depends on the one before).
fn path(n: usize) -> Vec<Vec<usize>> {
    (0..n).map(|i| if i == 0 { vec![] } else { vec![i - 1] }).collect()
}

/// The reduced dataflow edges into each of the items with accesses `acc`.
fn dataflow(acc: &[Vec<(usize, bool)>], n_buffers: usize) -> Vec<Vec<usize>> {
    let mut into = vec![Vec::new(); acc.len()];
    for e in dependencies_of(acc, n_buffers) {
        into[e.to].push(e.from);
    }
    into
}

fn body_plan(ir: &GraphIr, c: usize, serialized: bool) -> BodyPlan {
    let nodes: Vec<usize> = ir.controls[c].body().collect();
    let into = if serialized {
        path(nodes.len())
    } else {
        dataflow(&nodes.iter().map(|&n| ir.accesses(n)).collect::<Vec<_>>(), ir.buffers.len() + 1)
    };
    let mut has_successor = vec![false; nodes.len()];
    let planned = nodes
        .iter()
        .zip(&into)
        .map(|(&to, from)| {
            let edges = from
                .iter()
                .map(|&f| {
                    has_successor[f] = true;
                    (nodes[f], programmatic(ir, nodes[f], to))
                })
                .collect();
            (to, edges)
        })
        .collect();
    let sinks = nodes.iter().zip(&has_successor).filter(|(_, s)| !**s).map(|(&n, _)| n).collect();
    BodyPlan { nodes: planned, sinks }
}

fn plan(ir: &GraphIr, serialized: bool) -> BuildPlan {
    let units = units(ir);
    let into = if serialized {
        path(units.len())
    } else {
        dataflow(&units.iter().map(|&u| unit_accesses(ir, u)).collect::<Vec<_>>(), ir.buffers.len() + 1)
    };
    let planned = units
        .iter()
        .zip(into)
        .map(|(&to, from)| {
            let edges = from
                .into_iter()
                .map(|f| {
                    let prog = match (units[f], to) {
                        (Unit::Node(a), Unit::Node(b)) => programmatic(ir, a, b),
                        _ => false,
                    };
                    (f, prog)
                })
                .collect();
            (to, edges)
        })
        .collect();
    let bodies = (0..ir.controls.len()).map(|c| body_plan(ir, c, serialized)).collect();
    BuildPlan { units: planned, bodies }
}

/// The plan of `capture()`: the reduced dataflow between units and within each body.
pub fn branched(ir: &GraphIr) -> BuildPlan {
    plan(ir, false)
}

/// The plan of `capture_serialized()`: every unit after the one before it in file order, and
/// every body node after the one before it.
pub fn serialized(ir: &GraphIr) -> BuildPlan {
    plan(ir, true)
}
