//! The autotuner's cache: the block size chosen for each tunable graph node, keyed by GPU name,
//! graph, node and problem size (the node's total thread count), in a small text file that a
//! graph struct's `autotune` writes and `apply_tuning` reads. One entry per line, tab-separated:
//! `gpu  graph  node  threads  block`; `#` starts a comment. Unknown or malformed lines are an
//! error naming `path:line`, never skipped silently.
//!
//! # What a tuned block rests on
//! The cache is not trusted: `apply_tuning` and `autotune` take a cached block only when it is
//! the node's spec block or one of its `tune` candidates, and every shape is set through the
//! struct's `set_launch`, whose launch goes through the kernel's checked issue (block bound from
//! `__launch_bounds__`/`max_block`, extents over `grid`/`block`, `requires`, shared memory) when
//! a graph exists, else at the next launch; `profile`, which times each candidate, builds its
//! graph through the same checked issue. A refused candidate is skipped. `graph!` also checks
//! each candidate's extents, `requires` and `shared` at compile time.
//!
//! # Side effects of `autotune`
//! A candidate is timed by running the whole graph: `profile(iters)` replays the struct's
//! serialized graph `iters` times (and the captured graph, when there is one, for reference),
//! for the spec's block and for each candidate of each node not found in the cache. Every
//! replay runs every node on the struct's own buffers: outputs are overwritten, `state`
//! buffers advance (a recurrent state takes that many steps), `pinned_out` host memory is
//! written, and collective nodes run (every rank must call `autotune` with the same cache
//! contents, or the ranks' collectives no longer pair up). Upload the inputs and reset the
//! state after `autotune`, or tune on a struct of its own; `apply_tuning` launches nothing.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// What a tuned block size is for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TuneKey {
    /// The GPU's name (`Device::name`).
    pub gpu: String,
    /// The graph struct's name.
    pub graph: String,
    /// The spec node's name.
    pub node: String,
    /// The node's total thread count (`grid.x * block.x` as the spec gives it).
    pub threads: u64,
}

/// A cache file's entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TuneCache {
    entries: BTreeMap<TuneKey, u32>,
}

fn bad(path: &Path, line: usize, why: &str) -> Error {
    Error::graph("tune cache", format!("{}:{line}: {why}", path.display()))
}

impl TuneCache {
    /// Reads `path`; an absent file is an empty cache.
    pub fn load(path: &Path) -> Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(Error::graph("tune cache", format!("cannot read {}: {e}", path.display()))),
        };
        Self::parse(&text, path)
    }

    /// Parses the text of a cache file (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let mut entries = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = line.trim_end();
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() != 5 {
                return Err(bad(
                    path,
                    line_no,
                    &format!("expected 5 tab-separated fields, found {}: `{line}`", f.len()),
                ));
            }
            let threads =
                f[3].parse::<u64>().map_err(|_| bad(path, line_no, &format!("threads `{}` is not a count", f[3])))?;
            let block = f[4]
                .parse::<u32>()
                .ok()
                .filter(|b| (1..=1024).contains(b))
                .ok_or_else(|| bad(path, line_no, &format!("block `{}` is not a size from 1 to 1024", f[4])))?;
            let key = TuneKey { gpu: f[0].into(), graph: f[1].into(), node: f[2].into(), threads };
            entries.insert(key, block);
        }
        Ok(TuneCache { entries })
    }

    /// The cached block size for `key`.
    pub fn get(&self, key: &TuneKey) -> Option<u32> {
        self.entries.get(key).copied()
    }

    /// Records `block` for `key` (replacing an earlier choice).
    pub fn insert(&mut self, key: TuneKey, block: u32) {
        self.entries.insert(key, block);
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut s = String::from("# kgraph autotune cache: gpu\tgraph\tnode\tthreads\tblock\n");
        for (k, b) in &self.entries {
            let _ = writeln!(s, "{}\t{}\t{}\t{}\t{b}", k.gpu, k.graph, k.node, k.threads);
        }
        s
    }

    /// Writes the cache to `path` (through a temporary file renamed into place). A key whose
    /// GPU, graph or node name holds a tab or a line break, or whose GPU name starts with `#`,
    /// is refused: the file would not read back as it was written.
    pub fn save(&self, path: &Path) -> Result<()> {
        for k in self.entries.keys() {
            for (i, field) in [&k.gpu, &k.graph, &k.node].into_iter().enumerate() {
                if field.contains(['\t', '\n', '\r']) || (i == 0 && field.trim_start().starts_with('#')) {
                    return Err(Error::graph(
                        "tune cache",
                        format!("cannot write {}: the name {field:?} would not read back", path.display()),
                    ));
                }
            }
        }
        let tmp = PathBuf::from(format!("{}.tmp{}", path.display(), std::process::id()));
        let io = |e: std::io::Error| Error::graph("tune cache", format!("cannot write {}: {e}", path.display()));
        std::fs::write(&tmp, self.to_text()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// One tuned node: its per-node GPU time with the spec's block and with the chosen one.
#[derive(Debug, Clone, PartialEq)]
pub struct TunedNode {
    /// The node.
    pub node: String,
    /// The spec's block size and its GPU time (us, from `profile`).
    pub default: (u32, f64),
    /// The chosen block size and its GPU time (us); the cached choice's time when it came from
    /// the cache.
    pub chosen: (u32, f64),
    /// Whether the choice came from the cache (no candidate timed).
    pub cached: bool,
}

/// A line of `autotune`'s report per tunable node.
pub fn report_table(graph: &str, nodes: &[TunedNode]) -> String {
    let mut s = format!("{graph}: autotuned block sizes (per-node GPU time, serialized evented replay)\n");
    let _ = writeln!(s, "{:<14} {:>7} {:>9} {:>7} {:>9}  source", "node", "spec", "us", "tuned", "us");
    for n in nodes {
        let src = if n.cached { "cache" } else { "timed" };
        let _ = writeln!(
            s,
            "{:<14} {:>7} {:>9.2} {:>7} {:>9.2}  {src}",
            n.node, n.default.0, n.default.1, n.chosen.0, n.chosen.1
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_round_trips_and_bad_lines_are_located() {
        let mut c = TuneCache::default();
        let key = TuneKey { gpu: "NVIDIA H200".into(), graph: "Perception".into(), node: "cfc".into(), threads: 1024 };
        c.insert(key.clone(), 64);
        c.insert(TuneKey { node: "heads".into(), ..key.clone() }, 128);
        let path = Path::new("tune.txt");
        let back = TuneCache::parse(&c.to_text(), path).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.get(&key), Some(64));
        assert_eq!(back.get(&TuneKey { threads: 2048, ..key }), None, "another problem size is another entry");
        let e = TuneCache::parse("# ok\nNVIDIA H200\tG\tn\t12\n", path).unwrap_err().to_string();
        assert!(e.contains("tune.txt:2: expected 5 tab-separated fields, found 4"), "{e}");
        let e = TuneCache::parse("g\tG\tn\t12\t2048\n", path).unwrap_err().to_string();
        assert!(e.contains("tune.txt:1: block `2048` is not a size from 1 to 1024"), "{e}");
        assert!(TuneCache::load(Path::new("/nonexistent/kgraph-tune.txt")).unwrap().is_empty());
    }
}
