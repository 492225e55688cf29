//! [`Profile`]: per-node GPU times of a graph struct (its generated `profile` method), from
//! event-record nodes placed between the nodes of a serialized build of the graph.

use std::fmt;

use cudarc::driver::CudaEvent;

use crate::error::{Error, Result};
use crate::graph::capture::Graph;

/// One unit's time.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRow {
    /// The spec node (or `[[while]]`/`[[if]]`) name.
    pub node: String,
    /// What it runs: the kernel's name, `memset`, `memcpy`, `while` or `if`.
    pub kind: String,
    /// Median GPU time between the events before and after it, in microseconds.
    pub us: f64,
}

/// Per-node GPU times of one graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The graph struct's name.
    pub graph: &'static str,
    /// One row per unit, in file order.
    pub rows: Vec<ProfileRow>,
    /// Median GPU time of the whole serialized, evented replay, in microseconds.
    pub serial_us: f64,
    /// Median GPU time of one replay of the graph as captured (branched, PDL), when one was.
    pub replay_us: Option<f64>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

impl Profile {
    /// Replays `profiled` (a graph with `events[k]` recorded before unit `k` and `events[k+1]`
    /// after it) `iters` times and takes the medians; `reference` (the captured graph) is
    /// timed with [`Graph::replay_timed`] as often.
    pub fn measure(
        graph: &'static str,
        profiled: &Graph,
        events: &[CudaEvent],
        names: &[&str],
        kinds: &[&str],
        iters: usize,
        reference: Option<&Graph>,
    ) -> Result<Profile> {
        if events.len() != names.len() + 1 || iters == 0 {
            return Err(Error::graph(
                format!("{graph}::profile"),
                "one event per unit boundary and at least one replay",
            ));
        }
        let op = |what: &str| format!("{graph}::profile: {what}");
        // Grown as the replays come (no capacity from `iters`: a huge count must not abort on
        // allocation before the first replay).
        let mut samples = vec![Vec::new(); names.len()];
        let mut total = Vec::new();
        for _ in 0..iters {
            profiled.replay()?;
            profiled.stream().inner().synchronize().map_err(|e| Error::driver(op("synchronize"), e))?;
            for (k, s) in samples.iter_mut().enumerate() {
                let ms = events[k].elapsed_ms(&events[k + 1]).map_err(|e| Error::driver(op("elapsed time"), e))?;
                s.push(f64::from(ms) * 1e3);
            }
            let ms = events[0].elapsed_ms(&events[names.len()]).map_err(|e| Error::driver(op("elapsed time"), e))?;
            total.push(f64::from(ms) * 1e3);
        }
        let rows = names
            .iter()
            .zip(kinds)
            .zip(samples.iter_mut())
            .map(|((n, k), s)| ProfileRow { node: n.to_string(), kind: k.to_string(), us: median(s) })
            .collect();
        let replay_us = match reference.filter(|g| !g.is_empty()) {
            Some(g) => {
                let mut t =
                    (0..iters).map(|_| g.replay_timed().map(|ms| f64::from(ms) * 1e3)).collect::<Result<Vec<_>>>()?;
                Some(median(&mut t))
            }
            None => None,
        };
        Ok(Profile { graph, rows, serial_us: median(&mut total), replay_us })
    }
}

impl fmt::Display for Profile {
    /// A table: node, kind, microseconds, share of the serialized replay.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = self.rows.iter().map(|r| r.node.len()).max().unwrap_or(4).max(4);
        let k = self.rows.iter().map(|r| r.kind.len()).max().unwrap_or(6).max(6);
        writeln!(f, "{}: per-node GPU time (serialized, evented replay)", self.graph)?;
        writeln!(f, "{:<w$}  {:<k$}  {:>9}  {:>6}", "node", "kernel", "us", "%")?;
        for r in &self.rows {
            let pct = 100.0 * r.us / self.serial_us;
            writeln!(f, "{:<w$}  {:<k$}  {:>9.2}  {:>5.1}%", r.node, r.kind, r.us, pct)?;
        }
        writeln!(f, "{:<w$}  {:<k$}  {:>9.2}", "total", "", self.serial_us)?;
        if let Some(r) = self.replay_us {
            writeln!(f, "{:<w$}  {:<k$}  {:>9.2}", "replay", "(captured graph)", r)?;
        }
        Ok(())
    }
}
