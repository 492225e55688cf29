//! Dependencies between nodes, derived from what each node reads and writes, and the stream
//! schedule that captures them as parallel branches of one CUDA graph.
//!
//! Node `j` depends on an earlier node `i` when they touch a common buffer and at least one of
//! them writes it (read-after-write, write-after-read and write-after-write are all kept). The
//! edge set is then transitively reduced: an edge implied by a longer path is dropped, so the
//! captured graph carries exactly the necessary ordering.

use crate::graph::ir::GraphIr;

/// Why one node must follow another, for one buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hazard {
    /// The later node reads what the earlier one wrote.
    Raw,
    /// The later node overwrites what the earlier one read.
    War,
    /// Both write.
    Waw,
}

impl Hazard {
    /// `RAW`, `WAR`, `WAW`.
    pub fn name(self) -> &'static str {
        match self {
            Hazard::Raw => "RAW",
            Hazard::War => "WAR",
            Hazard::Waw => "WAW",
        }
    }
}

/// A kept dependency edge `from → to` with the buffers that cause it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// Earlier node.
    pub from: usize,
    /// Later node.
    pub to: usize,
    /// `(buffer index, hazard)` for every buffer both nodes touch where one writes.
    pub causes: Vec<(usize, Hazard)>,
}

/// All direct conflicts `i → j` (`i < j`), before reduction.
pub fn conflicts(ir: &GraphIr) -> Vec<Edge> {
    let acc: Vec<Vec<(usize, bool)>> = (0..ir.nodes.len()).map(|n| ir.accesses(n)).collect();
    let mut out = Vec::new();
    for j in 0..acc.len() {
        for i in 0..j {
            let mut causes = Vec::new();
            for &(b, wi) in &acc[i] {
                if let Some(&(_, wj)) = acc[j].iter().find(|(x, _)| *x == b) {
                    let hazard = match (wi, wj) {
                        (true, true) => Hazard::Waw,
                        (true, false) => Hazard::Raw,
                        (false, true) => Hazard::War,
                        (false, false) => continue,
                    };
                    causes.push((b, hazard));
                }
            }
            if !causes.is_empty() {
                out.push(Edge { from: i, to: j, causes });
            }
        }
    }
    out.sort_by_key(|e| (e.from, e.to));
    out
}

/// The transitive reduction of `edges` over `n` nodes (edges go from lower to higher index).
pub fn reduce(n: usize, edges: &[Edge]) -> Vec<Edge> {
    // reach[u][v]: a path u → v of length >= 1 exists. Filled from the last node backwards,
    // which is a reverse topological order because every edge goes forwards.
    let mut reach = vec![vec![false; n]; n];
    for u in (0..n).rev() {
        for e in edges.iter().filter(|e| e.from == u) {
            reach[u][e.to] = true;
            let (head, tail) = reach.split_at_mut(e.to);
            for (dst, &src) in head[u].iter_mut().zip(tail[0].iter()) {
                *dst |= src;
            }
        }
    }
    edges
        .iter()
        .filter(|e| !edges.iter().any(|w| w.from == e.from && w.to != e.to && reach[w.to][e.to]))
        .cloned()
        .collect()
}

/// The reduced dependency edges of `ir`'s nodes.
pub fn dependencies(ir: &GraphIr) -> Vec<Edge> {
    reduce(ir.nodes.len(), &conflicts(ir))
}

/// One step of the capture schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Record event `event` on stream `stream` (0 = the capturing stream).
    Record {
        /// Event index.
        event: usize,
        /// Stream index.
        stream: usize,
    },
    /// Make `stream` wait for `event`.
    Wait {
        /// Stream index.
        stream: usize,
        /// Event index.
        event: usize,
    },
    /// Launch node `node` on `stream`.
    Launch {
        /// Node index.
        node: usize,
        /// Stream index.
        stream: usize,
        /// With programmatic dependent launch: set only where the stream's dependency set is
        /// exactly the node's one predecessor, a kernel launched just before on the same stream,
        /// so the programmatic edge relaxes that one dependency and no other.
        pdl: bool,
    },
}

/// How a graph is captured: streams, events and the ordered steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Side streams besides the capturing stream.
    pub side_streams: usize,
    /// Events used.
    pub events: usize,
    /// Stream of each node.
    pub stream_of: Vec<usize>,
    /// The steps, in issue order.
    pub steps: Vec<Step>,
}

impl Schedule {
    /// The edges a capture following this schedule records, `(from, to, programmatic)`, sorted:
    /// stream capture's rules applied to the steps (a launch depends on its stream's current
    /// dependency set and replaces it; a record copies a stream's set into the event; a wait adds
    /// the event's set to the stream's). A PDL launch makes its incoming edges programmatic.
    pub fn captured_edges(&self) -> Vec<(usize, usize, bool)> {
        let mut deps: Vec<Vec<usize>> = vec![vec![]; self.side_streams + 1];
        let mut event_deps: Vec<Vec<usize>> = vec![vec![]; self.events];
        let mut edges = vec![];
        for step in &self.steps {
            match *step {
                Step::Record { event, stream } => event_deps[event] = deps[stream].clone(),
                Step::Wait { stream, event } => deps[stream].extend(event_deps[event].iter().copied()),
                Step::Launch { node, stream, pdl } => {
                    edges.extend(deps[stream].iter().map(|&d| (d, node, pdl)));
                    deps[stream] = vec![node];
                }
            }
        }
        edges.sort();
        edges.dedup();
        edges
    }

    /// The captured edges that are programmatic (see [`Step::Launch`]).
    pub fn programmatic_edges(&self) -> Vec<(usize, usize)> {
        self.captured_edges().into_iter().filter(|e| e.2).map(|(f, t, _)| (f, t)).collect()
    }
}

/// Assigns nodes to streams so that stream order adds no edge beyond `edges`: a node continues
/// a stream only when that stream's last node is one of its direct predecessors; otherwise it
/// starts a new side stream. Cross-stream edges become event record/wait pairs, roots on side
/// streams wait on a fork event recorded first on the capturing stream, and every side stream is
/// joined back at the end (capture requires it). Captured this way, the CUDA graph's edges are
/// exactly `edges`.
///
/// `pdl[v]` asks for node `v` to be launched with PDL. It is granted only where `v` continues
/// the stream of its only predecessor (no event waits before it): the programmatic edge then
/// relaxes exactly that dependency. Roots and nodes that wait on other streams (joins) are
/// launched plainly, so every cross-stream dependency stays a full one.
pub fn schedule(n: usize, edges: &[Edge], pdl: &[bool]) -> Schedule {
    let preds: Vec<Vec<usize>> = (0..n).map(|v| edges.iter().filter(|e| e.to == v).map(|e| e.from).collect()).collect();
    let mut stream_of = vec![0usize; n];
    let mut tails: Vec<Option<usize>> = vec![None];
    for v in 0..n {
        let reuse = preds[v].iter().map(|&p| stream_of[p]).find(|&s| tails[s].is_some_and(|t| preds[v].contains(&t)));
        let s = match reuse {
            Some(s) => s,
            None if tails[0].is_none() => 0,
            None => {
                tails.push(None);
                tails.len() - 1
            }
        };
        stream_of[v] = s;
        tails[s] = Some(v);
    }
    let side_streams = tails.len() - 1;
    let needs_event: Vec<bool> =
        (0..n).map(|u| edges.iter().any(|e| e.from == u && stream_of[e.to] != stream_of[u])).collect();
    let first_on_stream = |v: usize| (0..v).all(|u| stream_of[u] != stream_of[v]);
    let fork = (0..n).any(|v| stream_of[v] != 0 && preds[v].is_empty());
    let mut events = 0;
    let mut steps = Vec::new();
    let fork_event = if fork {
        events += 1;
        steps.push(Step::Record { event: 0, stream: 0 });
        Some(0)
    } else {
        None
    };
    let mut node_event = vec![None; n];
    for v in 0..n {
        let s = stream_of[v];
        if s != 0 && first_on_stream(v) && preds[v].is_empty() {
            steps.push(Step::Wait { stream: s, event: fork_event.expect("fork event exists for side roots") });
        }
        for &p in &preds[v] {
            if stream_of[p] != s {
                steps.push(Step::Wait { stream: s, event: node_event[p].expect("predecessor recorded first") });
            }
        }
        let programmatic = pdl[v] && preds[v].len() == 1 && stream_of[preds[v][0]] == s;
        steps.push(Step::Launch { node: v, stream: s, pdl: programmatic });
        if needs_event[v] {
            node_event[v] = Some(events);
            steps.push(Step::Record { event: events, stream: s });
            events += 1;
        }
    }
    // Join each side stream back, unless the capturing stream already waited for the event
    // recorded after its last node (then nothing on it is left unjoined).
    let waited_by_origin: Vec<usize> = steps
        .iter()
        .filter_map(|st| match *st {
            Step::Wait { stream: 0, event } => Some(event),
            _ => None,
        })
        .collect();
    for s in 1..=side_streams {
        let last = (0..n).rev().find(|&v| stream_of[v] == s).expect("a side stream has a node");
        if node_event[last].is_some_and(|e| waited_by_origin.contains(&e)) {
            continue;
        }
        steps.push(Step::Record { event: events, stream: s });
        steps.push(Step::Wait { stream: 0, event: events });
        events += 1;
    }
    Schedule { side_streams, events, stream_of, steps }
}

/// Every node on the capturing stream in file order: a total order (each node depends on the one
/// before), no side streams, no events. PDL nodes after the first are launched with PDL (the
/// previous node in file order is then their only dependency).
pub fn serial_schedule(n: usize, pdl: &[bool]) -> Schedule {
    let steps = (0..n).map(|v| Step::Launch { node: v, stream: 0, pdl: v > 0 && pdl[v] }).collect();
    Schedule { side_streams: 0, events: 0, stream_of: vec![0; n], steps }
}
