//! GEMM nodes in specs (`gemm = { a, b, c, m, n, k, .. }`): what validates (the IR, the
//! dataflow it joins) and the one located error of each rule.

use kgraph_codegen::graph::ir::{Binding, GemmBatch, GemmCompute, GemmOp, NodeOp};
use kgraph_codegen::graph::{analyze, generate, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
"#;

/// Dims m = 4, n = 3, k = 2; f32 buffers `a` (m x k), `b` (k x n), `c` (m x n), `w` (m x n,
/// scratch); f16 `h` and bf16 `g` (m x k); an f32 scalar `beta` and an i32 scalar `steps`.
fn run(body: &str) -> Result<Analysis, Vec<String>> {
    let text = run_text(body);
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

/// Nodes using every buffer and scalar but the one under test, so only its error shows.
const USE_REST: &str = r#"
[[node]]
name = "use_rest"
kernel = "k_copy"
grid = 1
block = 32
args = { x = "c", y = "w", n = "mn" }
[[node]]
name = "use_half"
memcpy = { src = "h", dst = "h_out" }
[[node]]
name = "use_bf16"
memcpy = { src = "g", dst = "g_out" }
[[node]]
name = "use_pin"
memcpy = { src = "pin", dst = "pin_out" }
[[node]]
name = "use_scalars"
gemm = { a = "a", b = "b", c = "w2", m = "m", n = "n", k = "k", beta = "beta", compute = "f32" }
[[node]]
name = "use_steps"
kernel = "k_copy"
grid = 1
block = 32
args = { x = "c", y = "w3", n = "steps" }
[buffers.h_out]
dtype = "f16"
len = "m * k"
role = "output"
[buffers.g_out]
dtype = "bf16"
len = "m * k"
role = "output"
[buffers.pin_out]
dtype = "f32"
len = "m * k"
role = "output"
[buffers.w2]
dtype = "f32"
len = "m * n"
role = "state"
[buffers.w3]
dtype = "f32"
len = "m * n"
role = "output"
"#;

fn spec(node: &str) -> String {
    format!("[[node]]\nname = \"fc\"\n{node}\n{USE_REST}")
}

fn errors(node: &str) -> String {
    match run(&spec(node)) {
        Ok(_) => panic!("must not validate:\n{node}"),
        Err(e) => e.join("\n"),
    }
}

fn gemm_op(a: &Analysis, name: &str) -> GemmOp {
    let node = a.ir.nodes.iter().find(|n| n.name == name).expect("the node");
    match node.op {
        NodeOp::Gemm(op) => op,
        _ => panic!("{name} is not a gemm node"),
    }
}

#[test]
fn a_gemm_validates_with_packed_defaults_and_joins_the_dataflow() {
    let a = run(&spec(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", compute = "tf32" }"#))
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let op = gemm_op(&a, "fc");
    assert_eq!((op.m, op.n, op.k, op.lda, op.ldb, op.ldc), (4, 3, 2, 2, 3, 3), "ld defaults to the row length");
    assert_eq!((op.compute, op.batch, op.reads_c), (GemmCompute::Tf32, None, false), "beta defaults to 0");
    let node = &a.ir.nodes[0];
    assert_eq!(node.args.len(), 5, "a, b, c, alpha, beta; C is not read");
    assert!(matches!(node.args[GemmOp::C].binding, Binding::Buffer { mutable: true, .. }));
    // `use_rest` reads what the gemm writes (c): one RAW edge from node 0 to node 1.
    assert!(a.edges.iter().any(|e| e.from == 0 && e.to == 1), "{:?}", a.edges.iter().map(|e| (e.from, e.to)));
    // A scalar beta reads C: `use_scalars` (state w2) reads and writes it.
    let acc = gemm_op(&a, "use_scalars");
    assert!(acc.reads_c);
    let node = a.ir.nodes.iter().find(|n| n.name == "use_scalars").unwrap();
    assert_eq!(node.args.len(), 6, "C read as well as written");
    assert!(matches!(node.args[GemmOp::BETA].binding, Binding::Scalar { .. }));
}

#[test]
fn transposes_leading_dimensions_and_batches_are_proved_against_the_lengths() {
    // A stored k x m (trans_a, lda = m = 4), B stored n x k (trans_b, ldb = k = 2): still 8 and 6.
    let node = r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", trans_a = true, trans_b = true, compute = "f32", alpha = 0.5 }"#;
    let a = run(&spec(node)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let op = gemm_op(&a, "fc");
    assert_eq!((op.lda, op.ldb, op.ldc), (4, 2, 3));
    // Two products of 2 x 3 from 1 x 2 rows: A stride 2, B shared (stride 0), C stride 6: A needs
    // 2 + 2 = 4, C (1*3+3) + 6 = 12.
    let node = r#"gemm = { a = "a", b = "b", c = "c", m = 2, n = "n", k = "k", compute = "f32", batch = { count = 2, stride_a = 4, stride_b = 0 } }"#;
    let a = run(&spec(node)).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let op = gemm_op(&a, "fc");
    assert_eq!(op.batch, Some(GemmBatch { count: 2, stride_a: 4, stride_b: 0, stride_c: 6 }), "stride_c packed");
    // The same with 3 products: C would need 18 of 12.
    let e = errors(
        r#"gemm = { a = "a", b = "b", c = "c", m = 2, n = "n", k = "k", compute = "f32", batch = { count = 3, stride_a = 0, stride_b = 0 } }"#,
    );
    assert!(
        e.contains("g.toml:")
            && e.contains(
                "gemm node `fc`: C is 2 x 3 row-major with ldc = 3 plus 2 more matrices stride_c = 6 apart, touching 18 elements, but buffer `c` holds 12 (m * n)"
            ),
        "{e}"
    );
}

#[test]
fn extents_too_small_and_ld_too_small_are_located_errors() {
    // k = 3 reads 4 x 3 of A, which holds 4 x 2.
    let e = errors(r#"gemm = { a = "a", b = "w", c = "c", m = "m", n = "n", k = 3, compute = "f32" }"#);
    assert!(
        e.contains("A is 4 x 3 row-major with lda = 3, touching 12 elements, but buffer `a` holds 8 (m * k)"),
        "{e}"
    );
    let line = e.lines().find(|l| l.contains("buffer `a` holds 8")).unwrap();
    assert!(line.starts_with("g.toml:"), "located: {e}");
    assert!(e.contains("gemm = { a = \"a\""), "the line is quoted: {e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", ldc = 2, compute = "f32" }"#);
    assert!(e.contains("`ldc` = 2 is less than the row length of C (4 x 3 row-major): rows would overlap"), "{e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", ldc = 4, compute = "f32" }"#);
    assert!(e.contains("C is 4 x 3 row-major with ldc = 4, touching 15 elements, but buffer `c` holds 12"), "{e}");
    let e = errors(
        r#"gemm = { a = "a", b = "b", c = "c", m = 2, n = "n", k = "k", compute = "f32", batch = { count = 2, stride_a = 0, stride_b = 0, stride_c = 5 } }"#,
    );
    assert!(e.contains("`batch.stride_c` = 5 is less than one C matrix's span (6 elements)"), "{e}");
}

#[test]
fn dtypes_compute_and_roles_are_checked() {
    let e = errors(r#"gemm = { a = "h", b = "b", c = "c", m = "m", n = "n", k = "k" }"#);
    assert!(e.contains("buffer `b` is f32, but A (`h`) is f16: A, B and C must have the same dtype"), "{e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k" }"#);
    assert!(e.contains("gemm node `fc` multiplies f32 matrices and needs `compute`"), "{e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", compute = "fp32" }"#);
    assert!(e.contains("unknown compute `fp32` (expected `f32`, `tf32`)"), "{e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "pin", m = "m", n = "n", k = "k", compute = "f32" }"#);
    assert!(e.contains("`c` is buffer `pin` with role `pinned`: a gemm reads and writes device memory"), "{e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "b", m = "k", n = "n", k = "k", compute = "f32" }"#);
    assert!(e.contains("`c` is buffer `b` with role `parameter`: a gemm writes C"), "{e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "nope", m = "m", n = "n", k = "k", compute = "f32" }"#);
    assert!(e.contains("unknown buffer `nope` for `gemm.c` of gemm node `fc`"), "{e}");
    let e =
        errors(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", compute = "f32", beta = "steps" }"#);
    assert!(e.contains("scalar `steps` is i32; alpha and beta are f32"), "{e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", compute = "f32" }"#);
    assert!(e.contains("gemm node `fc` needs `k`"), "{e}");
    let e = errors(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", compute = "f32", bias = "b" }"#);
    assert!(e.contains("unknown key `bias` in `gemm`"), "{e}");
}

#[test]
fn c_may_not_alias_a_or_b() {
    let e = errors(r#"gemm = { a = "w", b = "b", c = "w", m = "m", n = "n", k = "k", compute = "f32" }"#);
    assert!(e.contains("C is buffer `w`, which is also `a`: cuBLAS reads A while it writes C"), "{e}");
}

#[test]
fn each_mistake_is_one_error() {
    for node in [
        r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = 3, compute = "f32" }"#,
        r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k" }"#,
        r#"gemm = { a = "a", b = "b", c = "a", m = "m", n = "n", k = "k", compute = "f32" }"#,
        r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", ldc = 2, compute = "f32" }"#,
    ] {
        let e = errors(node);
        assert_eq!(e.lines().filter(|l| l.starts_with("g.toml:")).count(), 1, "{e}");
    }
}

#[test]
fn a_gemm_node_generates_its_launch_capture_and_update() {
    let text = run_text(&spec(r#"gemm = { a = "a", b = "b", c = "c", m = "m", n = "n", k = "k", compute = "f32" }"#));
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    let code = generate(&req).unwrap_or_else(|e| panic!("{}", e.join("\n"))).to_string();
    assert!(code.contains("blas : :: kgraph :: gemm :: Blas"), "the struct holds the handle");
    assert!(code.contains(":: kgraph :: gemm :: Blas :: new (device , 2usize)"), "two gemm nodes, two slots: {code}");
    assert!(code.contains("self . blas . issue_raw (0usize"), "{code}");
    assert!(code.contains("self . blas . capture_graph (1usize"), "{code}");
    assert!(code.contains("set_child_graph_node"), "{code}");
}

/// The whole spec text `run` builds around `body`.
fn run_text(body: &str) -> String {
    let mut text = String::from("[dims]\nm = 4\nn = 3\nk = 2\nmn = 12\n");
    for (name, dtype, len, role) in [
        ("a", "f32", "m * k", "input"),
        ("b", "f32", "k * n", "parameter"),
        ("c", "f32", "m * n", "output"),
        ("w", "f32", "m * n", "scratch"),
        ("h", "f16", "m * k", "input"),
        ("g", "bf16", "m * k", "input"),
        ("pin", "f32", "m * k", "pinned"),
    ] {
        text += &format!("[buffers.{name}]\ndtype = \"{dtype}\"\nlen = \"{len}\"\nrole = \"{role}\"\n");
    }
    text += "[scalars.beta]\ndtype = \"f32\"\ndefault = 1.0\n[scalars.steps]\ndtype = \"i32\"\n";
    text += body;
    text += "\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";
    text
}

#[test]
fn an_included_gemm_takes_the_including_specs_buffers_scalars_and_dims() {
    let kernels = "[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";
    let buffer = |name: &str, len: &str, role: &str| {
        format!("[buffers.{name}]\ndtype = \"f32\"\nlen = \"{len}\"\nrole = \"{role}\"\n")
    };
    let inc = format!(
        "{kernels}[dims]\nr = 4\ncols = 3\nd = 2\n{}{}{}[scalars.g]\ndtype = \"f32\"\ndefault = 1.0\n\
         [[node]]\nname = \"mm\"\ngemm = {{ a = \"x\", b = \"w\", c = \"y\", m = \"r\", n = \"cols\", k = \"d\", alpha = \"g\", compute = \"f32\" }}\n",
        buffer("x", "r * d", "input"),
        buffer("w", "d * cols", "parameter"),
        buffer("y", "r * cols", "output"),
    );
    let main = |scalars: &str| {
        format!(
            "{kernels}[dims]\nm = 4\nn = 3\nk = 2\n{}{}{}{}\
             [[include]]\nname = \"first\"\nspec = \"inc.toml\"\nbuffers = {{ x = \"a\", w = \"b\", y = \"c\" }}\nscalars = {scalars}\n",
            buffer("a", "m * k", "input"),
            buffer("b", "k * n", "parameter"),
            buffer("c", "m * n", "output"),
            if scalars.contains("gain") { "[scalars.gain]\ndtype = \"f32\"\ndefault = 2.0\n" } else { "" },
        )
    };
    for (scalars, want_scalar) in [("{ g = \"gain\" }", true), ("{ g = 0.5 }", false)] {
        let text = main(scalars);
        let read_file = |p: &str| match p {
            "inc.toml" => Ok(inc.clone()),
            _ => Ok(DECLS.to_string()),
        };
        let req = GraphRequest {
            spec_path: "main.toml",
            spec_text: &text,
            struct_name: None,
            root: "",
            read_file: &read_file,
        };
        let a = analyze(&req).unwrap_or_else(|e| panic!("{}", e.join("\n")));
        let op = gemm_op(&a, "first_mm");
        assert_eq!((op.m, op.n, op.k), (4, 3, 2), "the included dims' values");
        let node = &a.ir.nodes[0];
        let buffer_of = |i: usize| a.ir.buffers[node.args[i].binding.buffer_access().unwrap().0].name.clone();
        assert_eq!([buffer_of(GemmOp::A), buffer_of(GemmOp::B), buffer_of(GemmOp::C)], ["a", "b", "c"]);
        assert_eq!(matches!(node.args[GemmOp::ALPHA].binding, Binding::Scalar { .. }), want_scalar, "{scalars}");
    }
}
