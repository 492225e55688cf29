//! Which steps of a graph finish before others start: the happens-before relation the memory
//! plan shares bytes by. A step is a top-level unit (a node, or a control with its body) or a
//! node of one body. Everything not ordered counts as concurrent.
//!
//! Edges come from the build plans. A full edge `u → w` starts `w` after `u` completed. A
//! programmatic (PDL) edge lets `w` start once `u` triggered, overlapping `u`'s tail, so it does
//! not order them; it still starts `w` after `u` started, so a later full edge out of a path
//! that began with a full edge keeps the order. Hence `u` finishes before `v` starts exactly
//! when some path `u → … → v` begins with a full edge. With `pdl_orders` (the author's promise
//! that every PDL kernel waits before it touches any buffer) programmatic edges order too.

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

    /// Whether step `u` finishes before step `v` starts.
    pub fn before(&self, u: usize, v: usize) -> bool {
        self.bits[u * self.words + v / 64] & (1 << (v % 64)) != 0
    }

    /// The order of a DAG over `n` steps whose edges `(from, to, programmatic)` go forwards
    /// (`from < to`): `u` before `v` when a path from `u` to `v` starts with a full edge (or,
    /// with `pdl_orders`, any path).
    pub fn of_dag(n: usize, edges: &[(usize, usize, bool)], pdl_orders: bool) -> Self {
        // reach[u]: u and every step a path from u leads to.
        let mut reach = Order::empty(n);
        let mut order = Order::empty(n);
        let mut out: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
        for &(from, to, programmatic) in edges {
            out[from].push((to, programmatic && !pdl_orders));
        }
        let words = reach.words;
        for u in (0..n).rev() {
            reach.set(u, u);
            for &(w, programmatic) in &out[u] {
                for k in 0..words {
                    let r = reach.bits[w * words + k];
                    reach.bits[u * words + k] |= r;
                    if !programmatic {
                        order.bits[u * words + k] |= r;
                    }
                }
            }
        }
        order
    }

    /// The order of a chain of `n` steps run one after another on one stream (eager runs and
    /// the serialized plans), repeated (`wraps`: a loop's iterations, or the next run of the
    /// graph): step `i` finishes before every later step unless the step after it (the first
    /// one, after the last) may overlap it (`overlaps_prev[i + 1]`: a PDL kernel).
    pub fn of_chain(overlaps_prev: &[bool]) -> Self {
        let n = overlaps_prev.len();
        let mut order = Order::empty(n);
        for u in 0..n {
            if !overlaps_prev.get(u + 1).copied().unwrap_or(false) {
                (u + 1..n).for_each(|v| order.set(u, v));
            }
        }
        order
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
    use crate::graph::memplan::order::Order;

    #[test]
    fn a_programmatic_edge_orders_nothing_but_a_full_edge_after_it_is_no_help_either() {
        // 0 -PDL-> 1 -full-> 2: 1 may finish before 0 (no wait is assumed), so 2 may overlap 0.
        let o = Order::of_dag(3, &[(0, 1, true), (1, 2, false)], false);
        assert!(!o.before(0, 1) && !o.before(0, 2) && o.before(1, 2));
        // 0 -full-> 1 -PDL-> 2: 2 starts after 1 started, after 0 finished.
        let o = Order::of_dag(3, &[(0, 1, false), (1, 2, true)], false);
        assert!(o.before(0, 1) && o.before(0, 2) && !o.before(1, 2));
        // With the promise, programmatic edges order.
        let o = Order::of_dag(3, &[(0, 1, true), (1, 2, true)], true);
        assert!(o.before(0, 1) && o.before(0, 2) && o.before(1, 2));
    }

    #[test]
    fn a_chain_orders_a_step_before_the_rest_unless_the_next_step_overlaps_it() {
        let o = Order::of_chain(&[false, false, true, false]);
        assert!(o.before(0, 1) && o.before(0, 3));
        assert!(!o.before(1, 2) && !o.before(1, 3));
        assert!(o.before(2, 3) && !o.before(3, 0) && !o.before(2, 2));
    }
}
