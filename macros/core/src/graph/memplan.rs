//! The memory plan: the buffers whose lifetime the spec fully determines share one arena,
//! packed by liveness over the DAG. Code generation reads it (`emit::arena`); so do `kgraph dot
//! --plan` and the struct's `MEMORY_PLAN`.
//!
//! 1. Which buffers: `scratch` only (every other role is read or written by the host between
//!    replays, kept across them, or mapped host memory), not opted out (`plan_memory = false`
//!    for the spec, `plan = false` for the buffer), of a type whose size is known here (not a
//!    struct), whose first access in node order writes it, outside an `[[if]]` body unless every
//!    access is in that body (the body may not run), that no control's condition reads (the
//!    control kernel holds its address) and that no collective passes (other ranks' NCCL kernels
//!    may reach its bytes on their own schedule).
//! 2. When they are used: each buffer's steps, top-level units (a control with its whole body
//!    is one unit), or the body nodes of one control for a buffer used only inside it.
//! 3. Two buffers may share bytes only when every step of one finishes before any step of the
//!    other starts, in every way the graph runs ([`order`]): the branched graph of `capture()`,
//!    the stream capture of `capture_streamed()` (`streamed`), and the one-stream chain of
//!    `run_eager`, `capture_serialized` and `profile`, including the next iteration of a loop
//!    and the next run of the graph. A PDL kernel counts as ordered
//!    after the kernel before it only when it waits on its grid dependency before it touches any
//!    buffer (`waits_first`: proven from its compiled PTX, or the `graph!` caller's promise). In
//!    the chain a control is not one launch: `run_eager` launches its body nodes one by one, so
//!    it enters as the first of them that does not wait first, and a body node that may overlap
//!    the one before it leaves the control unfinished at its end (`unit_in_chain`).
//! 4. Packing: largest first, each at the lowest offset (a multiple of [`ARENA_ALIGN`]) that
//!    overlaps no placed buffer it may not share with.

pub mod diagram;
pub mod order;

use crate::graph::dataflow;
use crate::graph::ir::{ControlKind, GraphIr, NodeOp, Role};
use crate::graph::plan::{BuildPlan, Unit};
use order::{Follows, Order};

/// Every planned buffer starts at a multiple of this many bytes (what `cuMemAlloc` gives a
/// buffer of its own, so vector loads keep their alignment).
pub const ARENA_ALIGN: u64 = 256;

/// Why a buffer has an allocation of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unplanned {
    /// Mapped host memory (`pinned`, `slot`, `pinned_out`): not device memory.
    Host,
    /// A role whose data the host reads or writes, or that is kept across replays.
    Role(Role),
    /// The spec's `plan_memory = false` (or the macro call's).
    GraphOptOut,
    /// The buffer's `plan = false`.
    BufferOptOut,
    /// A struct element, whose size only rustc knows.
    StructElem,
    /// The condition of this control reads it.
    Condition(String),
    /// This collective node passes it.
    Collective(String),
    /// This node reads it before any node writes it in the same run.
    ReadFirst(String),
    /// Written first inside the body of this `[[if]]`, which may not run, and used outside it.
    WrittenUnderIf(String),
    /// Plannable, but no other buffer may share its bytes: the arena would save nothing.
    NothingShared,
}

impl Unplanned {
    /// Why, in words (docs and the DOT plan).
    pub fn text(&self) -> String {
        match self {
            Unplanned::Host => "mapped host memory".to_string(),
            Unplanned::Role(r) => format!("role `{}`", r.name()),
            Unplanned::GraphOptOut => "plan_memory = false".to_string(),
            Unplanned::BufferOptOut => "plan = false".to_string(),
            Unplanned::StructElem => "struct elements".to_string(),
            Unplanned::Condition(c) => format!("condition of `{c}`"),
            Unplanned::Collective(n) => format!("collective `{n}`"),
            Unplanned::ReadFirst(n) => format!("`{n}` reads it first"),
            Unplanned::WrittenUnderIf(c) => format!("first written under `{c}`"),
            Unplanned::NothingShared => "shares with no buffer".to_string(),
        }
    }
}

/// A planned buffer's bytes in the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Byte offset (a multiple of [`ARENA_ALIGN`]).
    pub offset: u64,
    /// Bytes it holds.
    pub bytes: u64,
}

/// Where one buffer lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BufferPlan {
    /// In the arena.
    Arena(Slot),
    /// An allocation of its own, and why.
    Own(Unplanned),
}

/// The plan of one graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPlan {
    /// Per buffer (indexed like `GraphIr::buffers`).
    pub buffers: Vec<BufferPlan>,
    /// The arena's size in bytes (0: no arena).
    pub arena_bytes: u64,
}

impl MemoryPlan {
    /// Buffer `b`'s slot, when it is planned.
    pub fn slot(&self, b: usize) -> Option<Slot> {
        match self.buffers.get(b) {
            Some(BufferPlan::Arena(s)) => Some(*s),
            _ => None,
        }
    }

    /// Device bytes outside the arena (every device buffer not planned); `None` when one of
    /// them holds structs.
    pub fn own_bytes(&self, ir: &GraphIr) -> Option<u64> {
        let own = (0..ir.buffers.len()).filter(|&b| self.slot(b).is_none());
        own.filter(|&b| !ir.buffers[b].role.is_host()).map(|b| buffer_bytes(ir, b)).sum()
    }

    /// Device bytes with every buffer in an allocation of its own (no plan); `None` with struct
    /// elements.
    pub fn bytes_without_plan(ir: &GraphIr) -> Option<u64> {
        (0..ir.buffers.len()).filter(|&b| !ir.buffers[b].role.is_host()).map(|b| buffer_bytes(ir, b)).sum()
    }
}

/// Buffer `b`'s size in bytes, when its element's size is known.
pub fn buffer_bytes(ir: &GraphIr, b: usize) -> Option<u64> {
    let buf = &ir.buffers[b];
    buf.elem.size().map(|s| s as u64 * buf.len)
}

/// When a buffer is used: top-level units, or (used only inside one control's body) its body
/// positions.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Steps {
    Units(Vec<usize>),
    Body { control: usize, unit: usize, steps: Vec<usize> },
}

impl Steps {
    fn units(&self) -> Vec<usize> {
        match self {
            Steps::Units(u) => u.clone(),
            Steps::Body { unit, .. } => vec![*unit],
        }
    }
}

/// The orders the plan is checked against: the top level's and each body's, with how each step
/// of each chain follows the one before it (the first step: the previous run's or iteration's
/// last).
struct Orders {
    top: Order,
    top_follows: Vec<Follows>,
    /// Per top-level unit: every launch of it has finished once its last one has (see
    /// [`unit_in_chain`]).
    top_done: Vec<bool>,
    bodies: Vec<(Order, Vec<Follows>)>,
}

/// The plan of `ir` with its build plans (`capture()`'s and `capture_serialized()`'s).
/// `waits_first[n]`: node `n`'s kernel waits on its grid dependency before it touches any buffer
/// (proven from its compiled PTX, or promised), so a programmatic edge into it orders its
/// accesses after the node before.
pub fn plan(ir: &GraphIr, branched: &BuildPlan, waits_first: &[bool]) -> MemoryPlan {
    let unit_of = unit_of_nodes(ir, branched);
    let mut buffers: Vec<BufferPlan> = (0..ir.buffers.len()).map(|b| eligibility(ir, b)).collect();
    let steps: Vec<Option<Steps>> = (0..ir.buffers.len())
        .map(|b| matches!(buffers[b], BufferPlan::Arena(_)).then(|| steps_of(ir, &unit_of, b)))
        .collect();
    let orders = orders(ir, branched, waits_first);
    let mut candidates: Vec<usize> = (0..ir.buffers.len()).filter(|&b| steps[b].is_some()).collect();
    // A buffer that ends up sharing no byte gains nothing from the arena (only its alignment
    // padding): it leaves, and the rest is packed again, until every planned buffer shares.
    loop {
        let placed = pack(ir, &orders, &steps, &candidates);
        let alone: Vec<usize> = placed
            .iter()
            .filter(|(b, s)| {
                placed.iter().all(|(c, t)| c == b || !(s.offset < t.offset + t.bytes && t.offset < s.offset + s.bytes))
            })
            .map(|(b, _)| *b)
            .collect();
        if alone.is_empty() {
            for &(b, slot) in &placed {
                buffers[b] = BufferPlan::Arena(slot);
            }
            let arena_bytes = placed.iter().map(|(_, s)| s.offset + s.bytes).max().unwrap_or(0);
            return MemoryPlan { buffers, arena_bytes };
        }
        for b in alone {
            buffers[b] = BufferPlan::Own(Unplanned::NothingShared);
            candidates.retain(|&c| c != b);
        }
    }
}

/// Places `candidates` (largest first, then in buffer order) at the lowest offsets that overlap
/// no placed buffer they may not share with.
fn pack(ir: &GraphIr, orders: &Orders, steps: &[Option<Steps>], candidates: &[usize]) -> Vec<(usize, Slot)> {
    let mut order = candidates.to_vec();
    order.sort_by_key(|&b| (std::cmp::Reverse(buffer_bytes(ir, b).unwrap_or(0)), b));
    let mut placed: Vec<(usize, Slot)> = Vec::new();
    for b in order {
        let bytes = buffer_bytes(ir, b).unwrap_or(0);
        let (Some(here), mut taken) = (steps[b].as_ref(), Vec::new()) else { continue };
        for (p, s) in &placed {
            if !steps[*p].as_ref().is_some_and(|there| may_share(orders, here, there)) {
                taken.push(*s);
            }
        }
        taken.sort_by_key(|s| s.offset);
        placed.push((b, Slot { offset: lowest_fit(&taken, bytes), bytes }));
    }
    placed
}

/// The lowest offset, a multiple of [`ARENA_ALIGN`], where `bytes` fit between the `taken`
/// slots (sorted by offset).
fn lowest_fit(taken: &[Slot], bytes: u64) -> u64 {
    let mut at = 0;
    for s in taken {
        if at + bytes <= s.offset {
            break;
        }
        at = at.max((s.offset + s.bytes).div_ceil(ARENA_ALIGN) * ARENA_ALIGN);
    }
    at
}

/// Whether buffer `b` may be planned: `Arena` (slot filled in later) or why not.
fn eligibility(ir: &GraphIr, b: usize) -> BufferPlan {
    let buf = &ir.buffers[b];
    let own = |why| BufferPlan::Own(why);
    if buf.role.is_host() {
        return own(Unplanned::Host);
    }
    if buf.role != Role::Scratch {
        return own(Unplanned::Role(buf.role));
    }
    if !ir.plan_memory {
        return own(Unplanned::GraphOptOut);
    }
    if !buf.plan {
        return own(Unplanned::BufferOptOut);
    }
    if buf.elem.size().is_none() {
        return own(Unplanned::StructElem);
    }
    if let Some(c) = ir.controls.iter().find(|c| c.condition_buffer() == Some(b)) {
        return own(Unplanned::Condition(c.name.clone()));
    }
    let users: Vec<usize> = (0..ir.nodes.len()).filter(|&n| ir.accesses(n).iter().any(|&(x, _)| x == b)).collect();
    if let Some(&n) = users.iter().find(|&&n| matches!(ir.nodes[n].op, NodeOp::Collective(_))) {
        return own(Unplanned::Collective(ir.nodes[n].name.clone()));
    }
    let Some(&first) = users.first() else { return own(Unplanned::ReadFirst(String::new())) };
    if !ir.accesses(first).contains(&(b, true)) {
        return own(Unplanned::ReadFirst(ir.nodes[first].name.clone()));
    }
    if let Some(c) = ir.control_of(first).filter(|&c| !ir.controls[c].is_loop()) {
        if users.iter().any(|&n| ir.control_of(n) != Some(c)) {
            return own(Unplanned::WrittenUnderIf(ir.controls[c].name.clone()));
        }
    }
    BufferPlan::Arena(Slot { offset: 0, bytes: 0 })
}

/// Each node's top-level unit (index into `branched.units`).
fn unit_of_nodes(ir: &GraphIr, branched: &BuildPlan) -> Vec<usize> {
    let mut unit_of = vec![0; ir.nodes.len()];
    for (u, (unit, _)) in branched.units.iter().enumerate() {
        match *unit {
            Unit::Node(n) => unit_of[n] = u,
            Unit::Control(c) => ir.controls[c].body().for_each(|n| unit_of[n] = u),
        }
    }
    unit_of
}

/// When buffer `b` is used.
fn steps_of(ir: &GraphIr, unit_of: &[usize], b: usize) -> Steps {
    let users: Vec<usize> = (0..ir.nodes.len()).filter(|&n| ir.accesses(n).iter().any(|&(x, _)| x == b)).collect();
    let control = ir.control_of(users[0]);
    match control {
        Some(c) if users.iter().all(|&n| ir.control_of(n) == Some(c)) => {
            let first = ir.controls[c].first;
            Steps::Body { control: c, unit: unit_of[users[0]], steps: users.iter().map(|&n| n - first).collect() }
        }
        _ => {
            let mut units: Vec<usize> = users.iter().map(|&n| unit_of[n]).collect();
            units.dedup();
            Steps::Units(units)
        }
    }
}

/// How node `n` follows the step before it on one stream: a kernel launched with PDL may start
/// before that step completed.
fn follows(ir: &GraphIr, n: usize, waits_first: &[bool]) -> Follows {
    match (ir.nodes[n].pdl && matches!(ir.nodes[n].op, NodeOp::Kernel(_)), waits_first[n]) {
        (false, _) => Follows::Completion,
        (true, true) => Follows::Wait,
        (true, false) => Follows::Overlap,
    }
}

/// How top-level unit `unit` follows the unit before it in the one-stream chain of `run_eager`,
/// and whether every launch of it has finished once its last launch has.
///
/// A node is one launch. A `[[while]]`/`[[if]]` is a conditional node of the built graphs (its
/// body graph completes before anything after it starts), but `run_eager` launches its body
/// nodes one by one on the stream, each by its own rule, `repeat = k` of them one iteration
/// after another: a body node that may overlap the one before it (a PDL kernel not known to
/// wait first) may then overlap what precedes the control, and leave the nodes before it running
/// after the control's last launch. So the control enters as its first body node that does not
/// wait first enters (`Wait` when every one waits first), and it is done at its end only when,
/// after each body node (around into the next iteration, for a loop that may iterate again), a
/// launch after a completion comes before any that may overlap. (An `[[if]]` whose body does not
/// run adds no launch: `run_eager` reads its flag back to the host first, so everything before it
/// completed before anything after it starts.)
fn unit_in_chain(ir: &GraphIr, unit: Unit, waits_first: &[bool]) -> (Follows, bool) {
    let c = match unit {
        Unit::Node(n) => return (follows(ir, n, waits_first), true),
        Unit::Control(c) => &ir.controls[c],
    };
    let chain: Vec<Follows> = c.body().map(|n| follows(ir, n, waits_first)).collect();
    let entry = match Follows::walk(&chain) {
        Some(true) => Follows::Completion,
        Some(false) => Follows::Overlap,
        None => Follows::Wait,
    };
    let iterates = match c.kind {
        ControlKind::Repeat(k) => k > 1,
        ControlKind::Until { max, .. } => max > 1,
        ControlKind::If { .. } => false,
    };
    let again: &[Follows] = if iterates { &chain } else { &[] };
    let done = (0..chain.len()).all(|i| Follows::walk(chain[i + 1..].iter().chain(again)) != Some(false));
    (entry, done)
}

/// The order of `capture_streamed()` (generated for specs without controls, whose units are
/// their nodes): the stream capture of the dataflow schedule. Its edges are the branched plan's,
/// but a PDL kernel that continues the stream of its one predecessor gets a programmatic edge
/// from whatever that node left last on the stream: a GEMM's cuBLAS kernel or a collective's
/// NCCL kernel too, where the built graphs have a full edge from the child graph or node.
fn streamed(ir: &GraphIr, waits_first: &[bool]) -> Order {
    let pdl: Vec<bool> = ir.nodes.iter().map(|n| n.pdl).collect();
    let edges = dataflow::schedule(ir.nodes.len(), &dataflow::dependencies(ir), &pdl).captured_edges();
    Order::of_dag(ir.nodes.len(), &edges, waits_first)
}

fn orders(ir: &GraphIr, branched: &BuildPlan, waits_first: &[bool]) -> Orders {
    let (top_follows, top_done): (Vec<Follows>, Vec<bool>) =
        branched.units.iter().map(|&(u, _)| unit_in_chain(ir, u, waits_first)).unzip();
    // Programmatic edges run between nodes only: a control unit is never the target of one.
    let unit_waits_first: Vec<bool> =
        branched.units.iter().map(|(u, _)| matches!(*u, Unit::Node(n) if waits_first[n])).collect();
    let top_edges: Vec<(usize, usize, bool)> = branched
        .units
        .iter()
        .enumerate()
        .flat_map(|(to, (_, edges))| edges.iter().map(move |&(from, prog)| (from, to, prog)))
        .collect();
    let mut top = Order::of_dag(branched.units.len(), &top_edges, &unit_waits_first)
        .and(&Order::of_chain_ending(&top_follows, &top_done));
    if ir.controls.is_empty() {
        top = top.and(&streamed(ir, waits_first));
    }
    let bodies = branched
        .bodies
        .iter()
        .enumerate()
        .map(|(c, body)| {
            let first = ir.controls[c].first;
            let edges: Vec<(usize, usize, bool)> = body
                .nodes
                .iter()
                .flat_map(|(to, edges)| edges.iter().map(move |&(from, prog)| (from - first, to - first, prog)))
                .collect();
            let chain: Vec<Follows> = ir.controls[c].body().map(|n| follows(ir, n, waits_first)).collect();
            let body_waits_first: Vec<bool> = ir.controls[c].body().map(|n| waits_first[n]).collect();
            (Order::of_dag(chain.len(), &edges, &body_waits_first).and(&Order::of_chain(&chain)), chain)
        })
        .collect();
    Orders { top, top_follows, top_done, bodies }
}

/// Whether step `y` of a repeated chain finishes before every later step touches memory,
/// whatever comes next (the next steps, and after the last: the first, of the next iteration or
/// the next run): walking on from `y`, around the end, a step that follows a completion comes
/// before any that may overlap.
fn finishes_before_next(chain: &[Follows], y: usize) -> bool {
    // Around to `y` of the next round: every step then waits first, each after the one before.
    Follows::walk(chain[y + 1..].iter().chain(&chain[..=y])).unwrap_or(true)
}

/// Whether buffers used at steps `a` and `b` may share bytes: every use of one finishes before
/// every use of the other starts, this run and the next (iteration).
fn may_share(o: &Orders, a: &Steps, b: &Steps) -> bool {
    match (a, b) {
        (Steps::Body { control: ca, unit, steps: sa }, Steps::Body { control: cb, steps: sb, .. }) if ca == cb => {
            let (order, chain) = &o.bodies[*ca];
            // After a body's last node come the next iteration's first and the next unit.
            let next_ok = |y: usize| {
                Follows::walk(&chain[y + 1..]).unwrap_or_else(|| {
                    finishes_before_next(chain, chain.len() - 1) && finishes_before_next(&o.top_follows, *unit)
                })
            };
            let ordered =
                |first: &[usize], then: &[usize]| order.all_before(first, then) && then.iter().all(|&y| next_ok(y));
            ordered(sa, sb) || ordered(sb, sa)
        }
        _ => {
            let (ua, ub) = (a.units(), b.units());
            let ordered = |first: &[usize], then: &[usize]| {
                o.top.all_before(first, then)
                    && then.iter().all(|&y| o.top_done[y] && finishes_before_next(&o.top_follows, y))
            };
            ordered(&ua, &ub) || ordered(&ub, &ua)
        }
    }
}
