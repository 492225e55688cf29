//! Shared by the property suites (`tests/prop_*.rs`): a deterministic PRNG, per-case panic
//! capture, text mutations, and a minimiser that shrinks a failing input before reporting it.
//!
//! `KGRAPH_PROP_SEED=<u64>` changes the seed, `KGRAPH_PROP_SCALE=<n>` multiplies the case
//! counts (e.g. for a long local run); both default to the committed values so CI is
//! deterministic.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// xorshift64*: small, fast, deterministic.
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// The seed of this run (`KGRAPH_PROP_SEED`, else a fixed default).
pub fn seed() -> u64 {
    std::env::var("KGRAPH_PROP_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x6b67_7261_7068)
}

/// `default` times `KGRAPH_PROP_SCALE` (default 1).
pub fn cases(default: usize) -> usize {
    let scale: usize = std::env::var("KGRAPH_PROP_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    default * scale.max(1)
}

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// The folders of the workspace's valid graph specs: the reference model's, the GPU suite's and
/// the bench's.
pub const SPEC_DIRS: [&str; 3] = ["graphs", "tests/graphs", "examples/bench/graphs"];

/// Every valid graph spec of the workspace ([`SPEC_DIRS`]), as `(relative path, text)`.
pub fn valid_specs() -> Vec<(String, String)> {
    SPEC_DIRS.iter().flat_map(|dir| files(dir, ".toml")).collect()
}

/// `dir/*.ext` under the workspace root, sorted, as `(relative path, text)`.
pub fn files(dir: &str, ext: &str) -> Vec<(String, String)> {
    let root = workspace_root();
    let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("dir entry").file_name().into_string().expect("UTF-8 file name"))
        .filter(|n| n.ends_with(ext))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let rel = format!("{dir}/{n}");
            let text = std::fs::read_to_string(root.join(&rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
            (rel, text)
        })
        .collect()
}

thread_local! {
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once) a panic hook that, on threads running a property case, records the panic
/// message and location instead of printing it; other panics go to the previous hook.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) {
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(info.to_string()));
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs one case: `Err` describes a panic or a violated property.
pub fn outcome<I: ?Sized>(prop: &dyn Fn(&I) -> Result<(), String>, input: &I) -> Result<(), String> {
    install_hook();
    CAPTURING.with(|c| c.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| prop(input)));
    CAPTURING.with(|c| c.set(false));
    match result {
        Ok(r) => r,
        Err(_) => Err(format!("PANIC: {}", LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default())),
    }
}

/// Greedily removes line chunks, then character chunks, while `fails` stays true (bounded).
pub fn minimise(input: &str, fails: &dyn Fn(&str) -> bool) -> String {
    let mut best = input.to_string();
    let mut budget = 3000usize;
    for by_lines in [true, false] {
        let split = |s: &str| -> Vec<String> {
            if by_lines {
                s.split_inclusive('\n').map(str::to_string).collect()
            } else {
                s.chars().map(String::from).collect()
            }
        };
        let mut parts = split(&best);
        let mut chunk = parts.len().max(1).next_power_of_two();
        while chunk >= 1 && budget > 0 {
            let mut start = 0;
            while start < parts.len() && budget > 0 {
                budget -= 1;
                let end = (start + chunk).min(parts.len());
                let candidate: String = parts[..start].concat() + &parts[end..].concat();
                if candidate != best && fails(&candidate) {
                    best = candidate;
                    parts = split(&best);
                } else {
                    start += chunk;
                }
            }
            chunk /= 2;
        }
    }
    best
}

/// Checks `prop` on a text input; on failure, minimises it and panics with both inputs.
pub fn check_text(suite: &str, case: usize, input: &str, prop: &dyn Fn(&str) -> Result<(), String>) {
    let Err(error) = outcome(prop, input) else { return };
    let minimal = minimise(input, &|s: &str| outcome(prop, s).is_err());
    let minimal_error = outcome(prop, &minimal).err().unwrap_or_default();
    panic!(
        "{suite}: case {case} (seed {}) fails: {error}\n\n--- minimised input ({minimal_error}) ---\n{minimal:?}\n\n\
         --- original input ---\n{input}",
        seed()
    );
}

/// A uniformly chosen char boundary of `s` (0 and `s.len()` included).
pub fn boundary(rng: &mut Rng, s: &str) -> usize {
    let n = s.chars().count();
    let k = rng.below(n + 1);
    s.char_indices().nth(k).map_or(s.len(), |(i, _)| i)
}

/// `s` split into lines, each with its `\n`.
pub fn lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// One generic text mutation: replace, delete or insert characters, swap, duplicate or drop
/// lines, truncate, or splice in a line of a donor text. `bits` are the snippets inserted.
pub fn mutate_text(rng: &mut Rng, s: &str, bits: &[&str], donors: &[&str]) -> String {
    match rng.below(9) {
        0 => {
            // Replace one character.
            let i = boundary(rng, s);
            let rest = &s[i..];
            let skip = rest.chars().next().map_or(0, char::len_utf8);
            format!("{}{}{}", &s[..i], rng.pick(bits), &rest[skip..])
        }
        1 => {
            // Delete a short run.
            let i = boundary(rng, s);
            let n = rng.range(1, 24);
            let j = s[i..].char_indices().nth(n).map_or(s.len(), |(k, _)| i + k);
            format!("{}{}", &s[..i], &s[j..])
        }
        2 | 3 => {
            let i = boundary(rng, s);
            format!("{}{}{}", &s[..i], rng.pick(bits), &s[i..])
        }
        4 => {
            let mut l = lines(s);
            if l.len() >= 2 {
                let (a, b) = (rng.below(l.len()), rng.below(l.len()));
                l.swap(a, b);
            }
            l.concat()
        }
        5 => {
            let mut l = lines(s);
            if !l.is_empty() {
                let a = rng.below(l.len());
                let line = l[a];
                l.insert(rng.below(l.len() + 1), line);
            }
            l.concat()
        }
        6 => {
            let mut l = lines(s);
            if !l.is_empty() {
                l.remove(rng.below(l.len()));
            }
            l.concat()
        }
        7 => s[..boundary(rng, s)].to_string(),
        _ if donors.is_empty() => s.to_string(),
        _ => {
            let donor = lines(donors[rng.below(donors.len())]);
            let mut l = lines(s);
            if !donor.is_empty() {
                let line = *rng.pick(&donor);
                l.insert(rng.below(l.len() + 1), line);
            }
            l.concat()
        }
    }
}

/// The `line`-th line (1-based) of `text` as split on `\n`, if it exists.
pub fn nth_line(text: &str, line: usize) -> Option<&str> {
    text.split('\n').nth(line.checked_sub(1)?)
}
