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

/// The hazard between an earlier access (`writes_first`) and a later one of the same buffer.
fn hazard(writes_first: bool, writes_later: bool) -> Option<Hazard> {
    match (writes_first, writes_later) {
        (true, true) => Some(Hazard::Waw),
        (true, false) => Some(Hazard::Raw),
        (false, true) => Some(Hazard::War),
        (false, false) => None,
    }
}

/// `(buffer, hazard)` for every buffer nodes with accesses `earlier` and `later` both touch
/// where one of them writes, in `earlier`'s access order.
fn causes(earlier: &[(usize, bool)], later: &[(usize, bool)]) -> Vec<(usize, Hazard)> {
    let later_writes = |b: usize| later.iter().find(|(x, _)| *x == b).map(|&(_, w)| w);
    earlier.iter().filter_map(|&(b, wi)| Some((b, hazard(wi, later_writes(b)?)?))).collect()
}

/// Every node's `(buffer, writes)` accesses, in node order.
fn all_accesses(ir: &GraphIr) -> Vec<Vec<(usize, bool)>> {
    (0..ir.nodes.len()).map(|n| ir.accesses(n)).collect()
}

/// All direct conflicts `i → j` (`i < j`), before reduction: every pair of nodes sharing a
/// buffer one of them writes. Quadratic in the nodes; [`dependencies`] does not need it (it is
/// the reference the near-linear path is tested against).
pub fn conflicts(ir: &GraphIr) -> Vec<Edge> {
    let acc = all_accesses(ir);
    let mut out = Vec::new();
    for j in 0..acc.len() {
        for i in 0..j {
            let causes = causes(&acc[i], &acc[j]);
            if !causes.is_empty() {
                out.push(Edge { from: i, to: j, causes });
            }
        }
    }
    out.sort_by_key(|e| (e.from, e.to));
    out
}

/// The conflicts that matter for the reduction, found per buffer in one pass: each access
/// against the buffer's last writer, and each write against the readers since that writer.
/// Every other conflict `i → j` has a writer `k` of the same buffer between them, so it is
/// implied by the path `i → … → k → … → j` these pairs contain: the transitive closure, and so
/// the reduction, is that of [`conflicts`]. At most two pairs per access: O(nodes · args).
fn candidate_pairs(acc: &[Vec<(usize, bool)>], n_buffers: usize) -> Vec<(usize, usize)> {
    let mut last_writer: Vec<Option<usize>> = vec![None; n_buffers];
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n_buffers];
    let mut pairs = Vec::new();
    for (j, accesses) in acc.iter().enumerate() {
        for &(b, writes) in accesses {
            pairs.extend(last_writer[b].map(|w| (w, j)));
            if writes {
                pairs.extend(readers[b].drain(..).map(|r| (r, j)));
                last_writer[b] = Some(j);
            } else {
                readers[b].push(j);
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// A bit set over node indices, `words` 64-bit words per row, one row per node.
struct ReachRows {
    words: usize,
    bits: Vec<u64>,
}

impl ReachRows {
    fn new(n: usize) -> Self {
        let words = n.div_ceil(64);
        ReachRows { words, bits: vec![0; words * n] }
    }

    fn row(&self, u: usize) -> &[u64] {
        &self.bits[u * self.words..(u + 1) * self.words]
    }
}

fn has(row: &[u64], v: usize) -> bool {
    row[v / 64] & (1 << (v % 64)) != 0
}

/// The transitive reduction of `edges` over `n` nodes (edges go from lower to higher index),
/// in the order given. Nodes are visited from the last backwards (a reverse topological order,
/// as every edge goes forwards), each with its successors in increasing order: `u → v` is
/// implied exactly when a smaller successor of `u` already reaches `v`. Bit rows make that
/// O(n · e / 64).
pub fn reduce(n: usize, edges: &[Edge]) -> Vec<Edge> {
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, e) in edges.iter().enumerate() {
        succ[e.from].push(i);
    }
    let mut reach = ReachRows::new(n);
    let mut keep = vec![false; edges.len()];
    let mut row = vec![0u64; reach.words];
    for u in (0..n).rev() {
        succ[u].sort_by_key(|&i| edges[i].to);
        row.iter_mut().for_each(|w| *w = 0);
        // A repeated edge keeps the verdict of its first copy (as duplicates both stay).
        let mut last: Option<(usize, bool)> = None;
        for &i in &succ[u] {
            let v = edges[i].to;
            keep[i] = match last {
                Some((lv, kept)) if lv == v => kept,
                _ => !has(&row, v),
            };
            last = Some((v, keep[i]));
            row[v / 64] |= 1 << (v % 64);
            row.iter_mut().zip(reach.row(v)).for_each(|(dst, src)| *dst |= src);
        }
        let words = reach.words;
        reach.bits[u * words..(u + 1) * words].copy_from_slice(&row);
    }
    edges.iter().zip(keep).filter(|(_, k)| *k).map(|(e, _)| e.clone()).collect()
}

/// The reduced dependency edges of `ir`'s nodes, sorted by `(from, to)`: the reduction of the
/// per-buffer candidates (see `candidate_pairs`), each with all the buffers behind it.
pub fn dependencies(ir: &GraphIr) -> Vec<Edge> {
    dependencies_of(&all_accesses(ir), ir.buffers.len() + 1)
}

/// [`dependencies`] for any sequence of accessors (nodes, or the units of a build plan), each
/// with its `(buffer, writes)` accesses.
pub fn dependencies_of(acc: &[Vec<(usize, bool)>], n_buffers: usize) -> Vec<Edge> {
    let candidates: Vec<Edge> =
        candidate_pairs(acc, n_buffers).into_iter().map(|(from, to)| Edge { from, to, causes: Vec::new() }).collect();
    let mut kept = reduce(acc.len(), &candidates);
    for e in &mut kept {
        e.causes = causes(&acc[e.from], &acc[e.to]);
    }
    kept
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
    // Built from the edge list in order, so each node's predecessors are in increasing order.
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in edges {
        preds[e.to].push(e.from);
    }
    let (stream_of, tails) = assign_streams(&preds);
    let side_streams = tails.len() - 1;
    let mut needs_event = vec![false; n];
    for e in edges.iter().filter(|e| stream_of[e.to] != stream_of[e.from]) {
        needs_event[e.from] = true;
    }
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
    let mut stream_started = vec![false; side_streams + 1];
    for v in 0..n {
        let s = stream_of[v];
        if s != 0 && !stream_started[s] && preds[v].is_empty() {
            steps.push(Step::Wait { stream: s, event: fork_event.expect("fork event exists for side roots") });
        }
        stream_started[s] = true;
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
    join_side_streams(&mut steps, &mut events, &tails, &node_event);
    Schedule { side_streams, events, stream_of, steps }
}

/// Each node's stream, and each stream's last node: a node continues the stream of one of its
/// predecessors when that predecessor is still the stream's last node, else takes the
/// capturing stream while it is unused, else a new side stream.
fn assign_streams(preds: &[Vec<usize>]) -> (Vec<usize>, Vec<Option<usize>>) {
    let mut stream_of = vec![0usize; preds.len()];
    let mut tails: Vec<Option<usize>> = vec![None];
    for (v, ps) in preds.iter().enumerate() {
        let reuse = ps.iter().map(|&p| stream_of[p]).find(|&s| tails[s].is_some_and(|t| ps.contains(&t)));
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
    (stream_of, tails)
}

/// Joins each side stream back into the capturing stream, unless the capturing stream already
/// waited for the event recorded after the side stream's last node (then nothing on it is left
/// unjoined).
fn join_side_streams(steps: &mut Vec<Step>, events: &mut usize, tails: &[Option<usize>], node_event: &[Option<usize>]) {
    let mut waited_by_origin = vec![false; *events];
    for step in steps.iter() {
        if let Step::Wait { stream: 0, event } = *step {
            waited_by_origin[event] = true;
        }
    }
    for (s, tail) in tails.iter().enumerate().skip(1) {
        let last = tail.expect("a side stream has a node");
        if node_event[last].is_some_and(|e| waited_by_origin[e]) {
            continue;
        }
        steps.push(Step::Record { event: *events, stream: s });
        steps.push(Step::Wait { stream: 0, event: *events });
        *events += 1;
    }
}

/// Every node on the capturing stream in file order: a total order (each node depends on the one
/// before), no side streams, no events. PDL nodes after the first are launched with PDL (the
/// previous node in file order is then their only dependency).
pub fn serial_schedule(n: usize, pdl: &[bool]) -> Schedule {
    let steps = (0..n).map(|v| Step::Launch { node: v, stream: 0, pdl: v > 0 && pdl[v] }).collect();
    Schedule { side_streams: 0, events: 0, stream_of: vec![0; n], steps }
}
