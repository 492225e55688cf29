//! The memory plan against `capture_streamed()`: the stream capture of the dataflow schedule.
//! Its edges are the branched plan's, but where a PDL kernel continues the stream of its one
//! predecessor, the capture makes the edge from whatever that node left last on the stream
//! programmatic: a GEMM's cuBLAS kernel or a copy too, where `capture()`'s graph (built through
//! the graph API) has a full edge from the child graph or copy node. With a node between them in
//! file order, `run_eager`'s chain orders them too, so only the stream capture lets the PDL
//! kernel start early.

use kgraph_codegen::graph::memplan::Slot;
use kgraph_codegen::graph::{analyze_with, Analysis, GraphRequest, Options};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_add(a: &[f32; n], b: &[f32; n], y: &mut [f32; n], n: i32);
"#;

/// f32 buffers of 1024 elements (dims `n = 1024`, `m = 32`), then `nodes`.
fn plan(buffers: &[(&str, &str)], nodes: &str) -> Analysis {
    let mut text = String::from("[dims]\nn = 1024\nm = 32\n");
    for (name, role) in buffers {
        text += &format!("[buffers.{name}]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"{role}\"\n");
    }
    text += nodes;
    text += "\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze_with(&req, &Options::default()).unwrap_or_else(|e| panic!("must validate:\n{}\n{text}", e.join("\n")))
}

fn kernel(name: &str, kernel: &str, pdl: bool, args: &str) -> String {
    format!("[[node]]\nname = \"{name}\"\nkernel = \"{kernel}\"\ngrid = 4\nblock = 256\npdl = {pdl}\nargs = {{ {args}, n = \"n\" }}\n")
}

fn slot(a: &Analysis, name: &str) -> Option<Slot> {
    let b = a.ir.buffers.iter().position(|b| b.name == name).unwrap_or_else(|| panic!("no buffer {name}"));
    a.memory.slot(b)
}

fn shares(a: &Analysis, p: &str, q: &str) -> bool {
    matches!((slot(a, p), slot(a, q)), (Some(x), Some(y)) if x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes)
}

const BUFFERS: [(&str, &str); 7] = [
    ("x", "input"),
    ("s1", "scratch"),
    ("s3", "scratch"),
    ("w", "parameter"),
    ("c", "scratch"),
    ("z", "output"),
    ("y", "output"),
];

/// c1 writes s1; `middle` reads s1 into c; q (independent) writes z; v (PDL, `pdl_v`) reads c
/// and writes s3; c5 reads s3.
fn nodes(middle: &str, pdl_v: bool) -> String {
    [
        kernel("c1", "k_copy", false, "x = \"x\", y = \"s1\""),
        format!("[[node]]\nname = \"g\"\n{middle}\n"),
        kernel("q", "k_copy", false, "x = \"x\", y = \"z\""),
        kernel("v", "k_add", pdl_v, "a = \"c\", b = \"c\", y = \"s3\""),
        kernel("c5", "k_copy", false, "x = \"s3\", y = \"y\""),
    ]
    .concat()
}

const GEMM: &str = "gemm = { a = \"s1\", b = \"w\", c = \"c\", m = \"m\", n = \"m\", k = \"m\", compute = \"f32\" }";
const MEMCPY: &str = "memcpy = { src = \"s1\", dst = \"c\" }";

#[test]
fn a_pdl_kernel_captured_right_after_a_gemm_or_a_copy_on_its_stream_may_overlap_it() {
    // The stream capture puts v on g's stream, launched with PDL: v may start once g's last
    // kernel triggers and write s3 while g still reads s1. v does not wait first (no record).
    for middle in [GEMM, MEMCPY] {
        let buffers: Vec<(&str, &str)> = BUFFERS.into_iter().filter(|b| b.0 != "w" || middle == GEMM).collect();
        let a = plan(&buffers, &nodes(middle, true));
        assert!(a.schedule.programmatic_edges().contains(&(1, 3)), "{middle}: {:?}", a.schedule);
        assert!(!shares(&a, "s1", "s3"), "{middle}: {:?}", a.memory);
        // Launched plainly, v starts after g completed: they may share.
        let a = plan(&buffers, &nodes(middle, false));
        assert!(shares(&a, "s1", "s3"), "{middle}: {:?}", a.memory);
    }
}
