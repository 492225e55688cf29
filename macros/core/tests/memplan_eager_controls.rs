//! The memory plan against `run_eager`'s one-stream chain when a `[[while]]`/`[[if]]` is in it.
//! The captured graph runs a control as one conditional node (its body graph completes before
//! anything after the control starts), but `run_eager` launches the body's nodes one by one on
//! the stream, each with its own PDL launch: a control is then not one step of the chain. A PDL
//! body node not known to wait first may overlap what comes before it (outside the body too) and
//! leave the nodes before it running after it ends (so after the control too). Each test is the
//! smallest spec where treating the control as one step (entered as its first body node enters,
//! done when its last node is) let two buffers share bytes that such a run touches at once.

use kgraph_codegen::graph::memplan::Slot;
use kgraph_codegen::graph::{analyze_with, Analysis, GraphRequest, Options};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_add(a: &[f32; n], b: &[f32; n], y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_split(x: &[f32; n], y: &mut [f32; n], z: &mut [f32; n], n: i32);
"#;

/// A record folder saying every kernel waits (the PDL check wants it) and which wait first:
/// `k_copy` does, `k_add` and `k_split` do not (they may write before their wait).
fn records() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("kgraph-kernels 1\n");
    for (kernel, first) in [("k_copy", 1), ("k_add", 0), ("k_split", 0)] {
        text += &format!("entry {kernel} visible=1 pdl_wait=1 pdl_trigger=1 calls=0 pdl_wait_first={first}\nend\n");
    }
    std::fs::write(dir.path().join("k.kernels"), text).unwrap();
    dir
}

/// `buffers` as `(name, role)`, f32 of 1024 elements each (4096 bytes), then `body`, planned as
/// `graph!` plans it with the records of [`records`].
fn plan(buffers: &[(&str, &str)], body: &str) -> Analysis {
    let mut text = String::from("[dims]\nn = 1024\n");
    for (name, role) in buffers {
        text += &format!("[buffers.{name}]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"{role}\"\n");
    }
    text += body;
    text += "\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    let dir = records();
    let options = Options { record_dir: Some(dir.path()), ..Options::default() };
    analyze_with(&req, &options).unwrap_or_else(|e| panic!("must validate:\n{}\n{text}", e.join("\n")))
}

/// A kernel node; `pdl` sets its `pdl`.
fn node(name: &str, kernel: &str, pdl: bool, args: &str) -> String {
    format!("[[node]]\nname = \"{name}\"\nkernel = \"{kernel}\"\ngrid = 4\nblock = 256\npdl = {pdl}\nargs = {{ {args}, n = \"n\" }}\n")
}

fn copy(name: &str, pdl: bool, x: &str, y: &str) -> String {
    node(name, "k_copy", pdl, &format!("x = \"{x}\", y = \"{y}\""))
}

fn add(name: &str, pdl: bool, a: &str, b: &str, y: &str) -> String {
    node(name, "k_add", pdl, &format!("a = \"{a}\", b = \"{b}\", y = \"{y}\""))
}

fn repeat(name: &str, nodes: &[&str], k: u32) -> String {
    format!("[[while]]\nname = \"{name}\"\nnodes = {nodes:?}\nrepeat = {k}\n")
}

fn slot(a: &Analysis, name: &str) -> Option<Slot> {
    let b = a.ir.buffers.iter().position(|b| b.name == name).unwrap_or_else(|| panic!("no buffer {name}"));
    a.memory.slot(b)
}

/// Whether buffers `p` and `q` are both planned and share bytes.
fn shares(a: &Analysis, p: &str, q: &str) -> bool {
    matches!((slot(a, p), slot(a, q)), (Some(x), Some(y)) if x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes)
}

#[test]
fn a_body_node_that_may_overlap_reaches_back_past_the_control_into_the_node_before() {
    // Eager: c1, c2, then the body b0 (PDL, waits first), b1 (PDL, may write s3 before its wait),
    // b2. b0 starts once c2 triggers and triggers at once; b1 then starts and may write s3 while
    // c2 still reads s1. The loop entered as its first node (waits first) hid b1.
    let buffers =
        [("x", "input"), ("s1", "scratch"), ("s3", "scratch"), ("s2", "scratch"), ("s4", "scratch"), ("y", "output")];
    let body = [
        copy("c1", false, "x", "s1"),
        copy("c2", false, "s1", "s4"),
        copy("b0", true, "s4", "s2"),
        add("b1", true, "s2", "s2", "s3"),
        copy("b2", true, "s3", "y"),
        repeat("lp", &["b0", "b1", "b2"], 1),
    ]
    .concat();
    let a = plan(&buffers, &body);
    assert!(!shares(&a, "s1", "s3"), "{:?}", a.memory);
}

#[test]
fn a_body_node_left_running_under_a_later_overlapping_one_outlives_the_control() {
    // Eager: b0 writes s2, b1 (PDL, not waiting first) may start and finish before b0 does;
    // c3 (plain) then waits for b1 only, and writes s5 while b0 may still write s2.
    let buffers = [("x", "input"), ("s2", "scratch"), ("s5", "scratch"), ("s3", "scratch"), ("y", "output")];
    let body = [
        copy("b0", false, "x", "s2"),
        add("b1", true, "s2", "s2", "s3"),
        copy("c3", false, "s3", "s5"),
        copy("c4", false, "s5", "y"),
        repeat("lp", &["b0", "b1"], 1),
    ]
    .concat();
    let a = plan(&buffers, &body);
    assert!(!shares(&a, "s2", "s5"), "{:?}", a.memory);
}

#[test]
fn an_overlapping_body_node_repeated_overlaps_its_previous_iteration_and_outlives_the_loop() {
    // b0 (PDL, not waiting first) alone in a loop of 2: the second b0 may overlap the first and
    // finish before it, so c2 (plain, after the loop) may run while the first b0 writes s.
    let buffers =
        [("x", "input"), ("t", "output"), ("s", "scratch"), ("w", "output"), ("s5", "scratch"), ("y", "output")];
    let body = [
        copy("p", false, "x", "t"),
        node("b0", "k_split", true, "x = \"x\", y = \"s\", z = \"w\""),
        copy("c2", false, "w", "s5"),
        copy("c3", false, "s5", "y"),
        repeat("lp", &["b0"], 2),
    ]
    .concat();
    let a = plan(&buffers, &body);
    assert!(!shares(&a, "s", "s5"), "{:?}", a.memory);
    // Run once, b0 is the loop's only launch: c2 starts after it completed, and the next run's
    // b0 after p, which starts after c3 completed. They may share.
    let once = plan(&buffers, &body.replace("repeat = 2", "repeat = 1"));
    assert!(shares(&once, "s", "s5"), "{:?}", once.memory);
}

#[test]
fn the_next_run_is_reached_through_a_later_control_whose_body_may_overlap() {
    // The chain c1..c4 inside loop l1 shares s1 and s3 when all are plain. Loop l2 follows: d0
    // (PDL, waits first) then d1 (PDL, may overlap). Eagerly, d1 may start while c4 still reads
    // s3 and finish first; the next run's c1 then waits for d1 only and writes s1 over s3.
    let buffers = [
        ("x", "input"),
        ("s1", "scratch"),
        ("s2", "scratch"),
        ("s3", "scratch"),
        ("y", "output"),
        ("s6", "scratch"),
        ("z", "output"),
    ];
    let chain = [
        copy("c1", false, "x", "s1"),
        copy("c2", false, "s1", "s2"),
        copy("c3", false, "s2", "s3"),
        copy("c4", false, "s3", "y"),
    ]
    .concat();
    let body = [
        chain.clone(),
        copy("d0", true, "y", "s6"),
        add("d1", true, "s6", "s6", "z"),
        repeat("l1", &["c1", "c2", "c3", "c4"], 1),
        repeat("l2", &["d0", "d1"], 1),
    ]
    .concat();
    let a = plan(&buffers, &body);
    assert!(!shares(&a, "s1", "s3"), "{:?}", a.memory);
    // Without l2 the chain shares as a plain chain does (the plan still finds the saving).
    let alone = plan(
        &[("x", "input"), ("s1", "scratch"), ("s2", "scratch"), ("s3", "scratch"), ("y", "output")],
        &[chain, repeat("l1", &["c1", "c2", "c3", "c4"], 1)].concat(),
    );
    assert!(shares(&alone, "s1", "s3"), "{:?}", alone.memory);
}
