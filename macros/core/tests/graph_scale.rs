//! Large generated specs: dependency analysis and code generation stay near-linear in the
//! number of nodes. Each test builds its spec text, checks the reduced edges exactly, and
//! prints the elapsed time (`--nocapture` shows it); the suite finishing is the check, so no
//! timing is asserted. `KGRAPH_SCALE_NODES` overrides the sizes (e.g. to compare revisions).

use std::fmt::Write as _;
use std::time::Instant;

use kgraph_codegen::graph::dataflow::{conflicts, reduce, Edge};
use kgraph_codegen::graph::{analyze, generate, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_step(h: &mut [f32; n], x: &[f32; n], n: i32);
"#;

fn size(default: usize) -> usize {
    std::env::var("KGRAPH_SCALE_NODES").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn head() -> String {
    "[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n[dims]\nn = 64\n".to_string()
}

fn buffer(out: &mut String, name: &str, role: &str) {
    writeln!(out, "[buffers.{name}]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"{role}\"").unwrap();
}

fn copy_node(out: &mut String, name: &str, x: &str, y: &str) {
    writeln!(out, "[[node]]\nname = \"{name}\"\nkernel = \"k_copy\"\ngrid = 1\nblock = 64\nargs = {{ x = \"{x}\", y = \"{y}\", n = \"n\" }}")
        .unwrap();
}

/// `nodes` copies in a chain: node `i` reads `b{i}` and writes `b{i+1}`.
fn chain_spec(nodes: usize) -> String {
    let mut s = head();
    for b in 0..=nodes {
        let role = if b == 0 {
            "input"
        } else if b == nodes {
            "output"
        } else {
            "scratch"
        };
        buffer(&mut s, &format!("b{b}"), role);
    }
    for i in 0..nodes {
        copy_node(&mut s, &format!("c{i}"), &format!("b{i}"), &format!("b{}", i + 1));
    }
    s
}

/// `nodes` in-place steps on one state buffer `h`: every pair of nodes conflicts (write after
/// write), so all but the `nodes - 1` links are implied ones the reduction drops.
fn in_place_chain_spec(nodes: usize) -> String {
    let mut s = head();
    buffer(&mut s, "h", "state");
    buffer(&mut s, "x", "input");
    for i in 0..nodes {
        writeln!(s, "[[node]]\nname = \"s{i}\"\nkernel = \"k_step\"\ngrid = 1\nblock = 64\nargs = {{ h = \"h\", x = \"x\", n = \"n\" }}")
            .unwrap();
    }
    s
}

/// One root writes `s`; `width` branches read it into outputs `y{i}`; the last node rewrites
/// `s`, so it waits for every branch (write-after-read): 1 → width → 1.
fn fan_spec(width: usize) -> String {
    let mut s = head();
    buffer(&mut s, "x", "input");
    buffer(&mut s, "s", "scratch");
    for i in 0..width {
        buffer(&mut s, &format!("y{i}"), "output");
    }
    copy_node(&mut s, "root", "x", "s");
    for i in 0..width {
        copy_node(&mut s, &format!("branch{i}"), "s", &format!("y{i}"));
    }
    copy_node(&mut s, "join", "x", "s");
    s
}

fn request<'a>(text: &'a str, read_file: &'a dyn Fn(&str) -> std::io::Result<String>) -> GraphRequest<'a> {
    GraphRequest { spec_path: "g.toml", spec_text: text, struct_name: None, root: "", read_file }
}

fn analysed(text: &str) -> Analysis {
    let read_file = |_: &str| Ok(DECLS.to_string());
    analyze(&request(text, &read_file)).unwrap_or_else(|e| panic!("{}", e.join("\n")))
}

/// Analyses, then generates (which analyses again), `text`, printing the time each took;
/// returns the reduced edges.
fn analyse_and_generate(label: &str, text: &str) -> Vec<(usize, usize)> {
    let start = Instant::now();
    let analysis = analysed(text);
    let analysis_time = start.elapsed();
    let read_file = |_: &str| Ok(DECLS.to_string());
    let start = Instant::now();
    let tokens = generate(&request(text, &read_file)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let generate_time = start.elapsed();
    let code_bytes = tokens.to_string().len();
    println!("{label}: analysed in {analysis_time:.2?}; analysed and generated ({code_bytes} bytes of code) in {generate_time:.2?}");
    analysis.edges.iter().map(|e| (e.from, e.to)).collect()
}

#[test]
fn a_long_chain_reduces_to_one_edge_per_link() {
    let nodes = size(5000);
    let edges = analyse_and_generate(&format!("chain of {nodes}"), &chain_spec(nodes));
    let expected: Vec<(usize, usize)> = (0..nodes - 1).map(|i| (i, i + 1)).collect();
    assert_eq!(edges, expected);
}

#[test]
fn a_long_in_place_chain_on_one_buffer_reduces_to_one_edge_per_link() {
    let nodes = size(5000);
    let edges = analyse_and_generate(&format!("in-place chain of {nodes}"), &in_place_chain_spec(nodes));
    let expected: Vec<(usize, usize)> = (0..nodes - 1).map(|i| (i, i + 1)).collect();
    assert_eq!(edges, expected);
}

#[test]
fn a_wide_fan_out_and_in_keeps_exactly_the_branch_edges() {
    let width = size(2000);
    let edges = analyse_and_generate(&format!("fan 1 -> {width} -> 1"), &fan_spec(width));
    let join = width + 1;
    let mut expected: Vec<(usize, usize)> = (1..=width).map(|b| (0, b)).collect();
    expected.extend((1..=width).map(|b| (b, join)));
    expected.sort();
    assert_eq!(edges, expected);
}

/// xorshift64*, for the random specs below (deterministic).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

/// A random mix of copies and in-place steps over a few state buffers (defined at the start,
/// so any order of reads and writes validates); node `i < buffers` reads `b{i}`, so all are used.
fn random_spec(rng: &mut Rng, buffers: usize, nodes: usize) -> String {
    let mut s = head();
    for b in 0..buffers {
        buffer(&mut s, &format!("b{b}"), "state");
    }
    for i in 0..nodes {
        let read = if i < buffers { i } else { rng.below(buffers) };
        let written = (read + 1 + rng.below(buffers - 1)) % buffers;
        let (x, y) = (format!("b{read}"), format!("b{written}"));
        if rng.below(2) == 0 {
            copy_node(&mut s, &format!("n{i}"), &x, &y);
        } else {
            writeln!(s, "[[node]]\nname = \"n{i}\"\nkernel = \"k_step\"\ngrid = 1\nblock = 64\nargs = {{ h = \"{y}\", x = \"{x}\", n = \"n\" }}")
                .unwrap();
        }
    }
    s
}

/// The transitive reduction as first written (quadratic reachability, every edge against every
/// other): the reference for the bit-row one.
fn naive_reduce(n: usize, edges: &[Edge]) -> Vec<Edge> {
    let mut reach = vec![vec![false; n]; n];
    for u in (0..n).rev() {
        for e in edges.iter().filter(|e| e.from == u) {
            reach[u][e.to] = true;
            let via = reach[e.to].clone();
            reach[u].iter_mut().zip(via).for_each(|(r, v)| *r |= v);
        }
    }
    edges
        .iter()
        .filter(|e| !edges.iter().any(|w| w.from == e.from && w.to != e.to && reach[w.to][e.to]))
        .cloned()
        .collect()
}

/// The per-buffer candidates give exactly the reduction (edges and their causes) of the full,
/// quadratic conflict set, and the bit-row reduction is the naive one.
#[test]
fn dependencies_equal_the_reduction_of_every_conflict() {
    let mut rng = Rng(0x6b67_7261_7068);
    for case in 0..300 {
        let buffers = 2 + rng.below(6);
        let nodes = buffers + rng.below(40);
        let a = analysed(&random_spec(&mut rng, buffers, nodes));
        let all = conflicts(&a.ir);
        let reference = naive_reduce(a.ir.nodes.len(), &all);
        assert_eq!(reduce(a.ir.nodes.len(), &all), reference, "case {case}: reduce");
        assert_eq!(a.edges, reference, "case {case}: dependencies");
    }
}
