//! Which steps of a graph finish before others start: the happens-before relation the memory
//! plan shares bytes by. A step is a top-level unit (a node, or a control with its body) or a
//! node of one body. Everything not ordered counts as concurrent. "`u` before `v`" means every
//! memory access of `u` is done before any of `v`.
//!
//! Edges come from the build plans. A full edge `u → w` starts `w` after `u` completed. A
//! programmatic (PDL) edge lets `w` start once `u` triggered, overlapping `u`'s tail, so it does
//! not order them; it still starts `w` after `u` started, so a later full edge out of a path
//! that began with a full edge keeps the order. Hence `u` finishes before `v` starts exactly
//! when some path `u → … → v` begins with a full edge.
//!
//! A programmatic edge into a kernel that waits on its grid dependency before it touches any
//! buffer (proven from its compiled PTX, or the author's promise: "waits first") orders that
//! kernel's accesses after `u`: but it may still start, and trigger its own dependents, before
//! `u` completed. So after such an edge the order goes on only through full edges and further
//! edges into kernels that wait first, not through a programmatic edge into one that does not.

/// How a step of a chain (steps run one after another on one stream) follows the step before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follows {
    /// It starts after the step before completed.
    Completion,
    /// A PDL kernel that waits first: it may start early, but touches memory only after the step
    /// before completed.
    Wait,
    /// A PDL kernel not known to wait first: it may overlap the step before.
    Overlap,
}

impl Follows {
    /// Whether the steps that follow some step `y` of a chain (`after`, in chain order) touch
    /// memory only after `y` completed: `Some(true)` at the first that starts after a completion
    /// (every later step starts after it), `Some(false)` at the first that may overlap, `None`
    /// when `after` ends first (only steps that wait first follow `y`).
    pub fn walk<'a>(after: impl IntoIterator<Item = &'a Follows>) -> Option<bool> {
        after.into_iter().find_map(|f| match f {
            Follows::Completion => Some(true),
            Follows::Overlap => Some(false),
            Follows::Wait => None,
        })
    }
}

/// A square bit matrix over `n` steps: row `u` holds the steps `u` finishes before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    n: usize,
    words: usize,
    bits: Vec<u64>,
}

impl Order {
    fn empty(n: usize) -> Self {
        let words = n.div_ceil(64).max(1);
        Order { n, words, bits: vec![0; words * n] }
    }

    fn set(&mut self, u: usize, v: usize) {
        self.bits[u * self.words + v / 64] |= 1 << (v % 64);
    }

    /// Row `u` |= `row`.
    fn or_row(&mut self, u: usize, row: &[u64]) {
        self.bits[u * self.words..(u + 1) * self.words].iter_mut().zip(row).for_each(|(a, b)| *a |= b);
    }

    fn row(&self, w: usize) -> &[u64] {
        &self.bits[w * self.words..(w + 1) * self.words]
    }

    /// Whether step `u` finishes before step `v` starts.
    pub fn before(&self, u: usize, v: usize) -> bool {
        self.bits[u * self.words + v / 64] & (1 << (v % 64)) != 0
    }

    /// The order of a DAG over `n` steps whose edges `(from, to, programmatic)` go forwards
    /// (`from < to`); `waits_first[to]`: step `to` is a kernel that waits first. `u` is before:
    /// every step reachable from a full edge out of `u`, and the target `w` of a programmatic
    /// edge out of `u` into a step that waits first, with every step `w` is before.
    pub fn of_dag(n: usize, edges: &[(usize, usize, bool)], waits_first: &[bool]) -> Self {
        Order::of_dag_ending(n, edges, waits_first, &vec![true; n])
    }

    /// [`Order::of_dag`] where a step `u` with `done[u]` false may leave some of its work
    /// running after it ends (a control run eagerly, whose body launches overlap each other):
    /// it finishes before no step, though the steps after it still start after it started.
    fn of_dag_ending(n: usize, edges: &[(usize, usize, bool)], waits_first: &[bool], done: &[bool]) -> Self {
        // reach[u]: u and every step a path from u leads to (they start after u started).
        let mut reach = Order::empty(n);
        let mut order = Order::empty(n);
        let mut out: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
        for &(from, to, programmatic) in edges {
            out[from].push((to, programmatic));
        }
        for u in (0..n).rev() {
            reach.set(u, u);
            for &(w, programmatic) in &out[u] {
                let reached = reach.row(w).to_vec();
                reach.or_row(u, &reached);
                if !done[u] {
                    continue;
                }
                if !programmatic {
                    order.or_row(u, &reached);
                } else if waits_first[w] {
                    // `w` touches memory after `u` completed, but its start orders nothing.
                    order.set(u, w);
                    let after_w = order.row(w).to_vec();
                    order.or_row(u, &after_w);
                }
            }
        }
        order
    }

    /// The order of a chain of steps run one after another on one stream (eager runs and the
    /// serialized plans): how each follows the one before (the first's entry is about the step
    /// before the chain, not used here).
    pub fn of_chain(follows: &[Follows]) -> Self {
        Order::of_chain_ending(follows, &vec![true; follows.len()])
    }

    /// [`Order::of_chain`] where a step `u` with `done[u]` false may leave work running after it
    /// ends (a `[[while]]`/`[[if]]` in an eager run: its body's launches, one of which may
    /// overlap the ones before it): it finishes before no other step.
    pub fn of_chain_ending(follows: &[Follows], done: &[bool]) -> Self {
        let edges: Vec<(usize, usize, bool)> =
            (1..follows.len()).map(|i| (i - 1, i, follows[i] != Follows::Completion)).collect();
        let waits_first: Vec<bool> = follows.iter().map(|&f| f == Follows::Wait).collect();
        Order::of_dag_ending(follows.len(), &edges, &waits_first, done)
    }

    /// The steps ordered in both `self` and `other`.
    pub fn and(mut self, other: &Order) -> Self {
        debug_assert_eq!(self.n, other.n);
        self.bits.iter_mut().zip(&other.bits).for_each(|(a, b)| *a &= b);
        self
    }

    /// Whether every step of `first` finishes before every step of `then` starts.
    pub fn all_before(&self, first: &[usize], then: &[usize]) -> bool {
        first.iter().all(|&u| then.iter().all(|&v| self.before(u, v)))
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::memplan::order::{Follows, Order};

    #[test]
    fn a_programmatic_edge_orders_nothing_but_a_full_edge_after_it_is_no_help_either() {
        let none = [false; 3];
        // 0 -PDL-> 1 -full-> 2: 1 may finish before 0 (no wait is assumed), so 2 may overlap 0.
        let o = Order::of_dag(3, &[(0, 1, true), (1, 2, false)], &none);
        assert!(!o.before(0, 1) && !o.before(0, 2) && o.before(1, 2));
        // 0 -full-> 1 -PDL-> 2: 2 starts after 1 started, after 0 finished.
        let o = Order::of_dag(3, &[(0, 1, false), (1, 2, true)], &none);
        assert!(o.before(0, 1) && o.before(0, 2) && !o.before(1, 2));
        // Into steps that wait first, programmatic edges order.
        let o = Order::of_dag(3, &[(0, 1, true), (1, 2, true)], &[false, true, true]);
        assert!(o.before(0, 1) && o.before(0, 2) && o.before(1, 2));
    }

    #[test]
    fn a_programmatic_edge_orders_per_step_that_waits_first() {
        // 0 -PDL-> 1 (waits first) -PDL-> 2 (does not): 1 touches memory after 0 completed, but it
        // may start and trigger 2 before that, and 2 may then overlap 0 as well as 1.
        let o = Order::of_dag(3, &[(0, 1, true), (1, 2, true)], &[false, true, false]);
        assert!(o.before(0, 1) && !o.before(0, 2) && !o.before(1, 2));
        // A full edge after it: 2 starts after 1 completed, after 0 completed.
        let o = Order::of_dag(3, &[(0, 1, true), (1, 2, false)], &[false, true, false]);
        assert!(o.before(0, 1) && o.before(0, 2) && o.before(1, 2));
        // Whether the source waits first does not matter: 1 may still overlap 0, and may finish
        // before 0, so 2 (waiting for 1 only) may overlap 0 too.
        let o = Order::of_dag(3, &[(0, 1, true), (1, 2, true)], &[true, false, true]);
        assert!(!o.before(0, 1) && !o.before(0, 2) && o.before(1, 2));
    }

    #[test]
    fn a_chain_orders_a_step_before_the_rest_unless_a_later_step_may_overlap_it() {
        use Follows::{Completion as C, Overlap as O, Wait as W};
        let o = Order::of_chain(&[C, C, O, C]);
        assert!(o.before(0, 1) && o.before(0, 3));
        assert!(!o.before(1, 2) && !o.before(1, 3));
        assert!(o.before(2, 3) && !o.before(3, 0) && !o.before(2, 2));
        // Steps that wait first keep the order until one that may overlap.
        let o = Order::of_chain(&[C, W, W, O, C]);
        assert!(o.before(0, 1) && o.before(0, 2) && o.before(1, 2));
        assert!(!o.before(0, 3) && !o.before(2, 3) && !o.before(0, 4) && o.before(3, 4));
        let chain = [C, W, W, O, C];
        let walked: Vec<Option<bool>> = (0..5).map(|y| Follows::walk(&chain[y + 1..])).collect();
        assert_eq!(walked, [Some(false), Some(false), Some(false), Some(true), None]);
        assert_eq!(Follows::walk(&[W, W]), None, "only waiting steps follow");
    }

    #[test]
    fn a_step_that_may_leave_work_running_finishes_before_nothing() {
        use Follows::{Completion as C, Wait as W};
        // Step 1 ends with work still running: nothing after it is ordered after it, but what
        // starts after it still starts after step 0 finished.
        let o = Order::of_chain_ending(&[C, C, C, W], &[true, false, true, true]);
        assert!(o.before(0, 1) && o.before(0, 2) && o.before(0, 3));
        assert!(!o.before(1, 2) && !o.before(1, 3));
        assert!(o.before(2, 3));
    }
}
