//! Soundness review of GEMM nodes: specs that would let cuBLAS touch memory outside its
//! operands, or write C while something else uses the same bytes, must be refused; the memory
//! plan must keep a GEMM's operands apart and give C its whole buffer.

use kgraph_codegen::graph::ir::NodeOp;
use kgraph_codegen::graph::{analyze, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
"#;

const KERNELS: &str = "[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";

fn buffer(name: &str, len: &str, role: &str) -> String {
    format!("[buffers.{name}]\ndtype = \"f32\"\nlen = \"{len}\"\nrole = \"{role}\"\n")
}

fn copy(name: &str, x: &str, y: &str) -> String {
    format!(
        "[[node]]\nname = \"{name}\"\nkernel = \"k_copy\"\ngrid = 1\nblock = 32\nargs = {{ x = \"{x}\", y = \"{y}\", n = \"len\" }}\n"
    )
}

fn gemm(name: &str, body: &str) -> String {
    format!("[[node]]\nname = \"{name}\"\ngemm = {{ {body} }}\n")
}

fn analyze_files(main: &str, inc: Option<&str>) -> Result<Analysis, Vec<String>> {
    let read_file = |p: &str| match (p, inc) {
        ("inc.toml", Some(i)) => Ok(i.to_string()),
        _ => Ok(DECLS.to_string()),
    };
    let req = GraphRequest { spec_path: "g.toml", spec_text: main, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

/// dims: d = 32, len = 1024 (= d * d); x input, y output, s1..s4 scratch, all f32 `len`
/// (unused ones are errors, reported alongside).
fn square(nodes: &str) -> String {
    let mut t = format!("{KERNELS}[dims]\nd = 32\nlen = 1024\n");
    if nodes.contains("\"beta\"") {
        t += "[scalars.beta]\ndtype = \"f32\"\ndefault = 1.0\n";
    }
    t += &buffer("x", "len", "input");
    t += &buffer("y", "len", "output");
    for s in ["s1", "s2", "s3", "s4"] {
        t += &buffer(s, "len", "scratch");
    }
    t + nodes
}

fn errors(text: &str) -> String {
    match analyze_files(text, None) {
        Ok(_) => panic!("must not validate:\n{text}"),
        Err(e) => e.join("\n"),
    }
}

#[test]
fn a_scratch_c_read_by_beta_before_any_write_is_refused() {
    // beta = 1 reads C: s3 was never written, and the memory plan would treat the GEMM as its
    // first writer, so another buffer's bytes could be accumulated into it.
    for beta in ["beta = 1.0", "beta = \"beta\""] {
        let nodes = [
            copy("c1", "x", "s1"),
            gemm(
                "mm",
                &format!(
                    "a = \"s1\", b = \"s1\", c = \"s3\", m = \"d\", n = \"d\", k = \"d\", compute = \"f32\", {beta}"
                ),
            ),
            copy("c2", "s3", "y"),
        ]
        .concat();
        let e = errors(&square(&nodes));
        assert!(e.contains("node `mm` reads scratch buffer `s3` before anything writes it"), "{beta}: {e}");
    }
}

#[test]
fn the_memory_plan_keeps_a_gemms_operands_apart_and_gives_c_its_whole_buffer() {
    // A chain: x -> s1 -> (gemm s1, s1 -> s2) -> s3 -> s4 -> y. The GEMM's A/B (s1) and C (s2)
    // may not share bytes; s3 may reuse s1's after the GEMM, s4 s2's.
    let nodes = [
        copy("c1", "x", "s1"),
        gemm("mm", "a = \"s1\", b = \"s1\", c = \"s2\", m = \"d\", n = \"d\", k = \"d\", compute = \"f32\""),
        copy("c2", "s2", "s3"),
        copy("c3", "s3", "s4"),
        copy("c4", "s4", "y"),
    ]
    .concat();
    let a = analyze_files(&square(&nodes), None).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let slot = |n: &str| a.memory.slot(a.ir.buffers.iter().position(|b| b.name == n).unwrap());
    let (s1, s2, s3) = (slot("s1").unwrap(), slot("s2").unwrap(), slot("s3").unwrap());
    assert!(s1.offset + s1.bytes <= s2.offset || s2.offset + s2.bytes <= s1.offset, "A and C share: {:?}", a.memory);
    assert_eq!(s1.offset, s3.offset, "the plan is at work: s3 reuses A's bytes after the GEMM: {:?}", a.memory);
    assert_eq!(s2.bytes, 4096, "C's slot holds the whole buffer");
}

#[test]
fn a_gemm_in_an_included_spec_may_not_write_c_over_a_through_one_outer_buffer() {
    let inc = format!(
        "{KERNELS}[dims]\nr = 4\n{}{}[[node]]\nname = \"mm\"\ngemm = {{ a = \"p\", b = \"p\", c = \"q\", m = \"r\", n = \"r\", k = \"r\", compute = \"f32\" }}\n",
        buffer("p", "r * r", "input"),
        buffer("q", "r * r", "output"),
    );
    let main = format!(
        "{KERNELS}[dims]\nm = 4\nlen = 16\n{}{}[[include]]\nname = \"i\"\nspec = \"inc.toml\"\nbuffers = {{ p = \"w\", q = \"w\" }}\n{}",
        buffer("w", "len", "state"),
        buffer("y", "len", "output"),
        copy("out", "w", "y"),
    );
    match analyze_files(&main, Some(&inc)) {
        Ok(a) => {
            panic!("C aliases A through the include: {:?}", a.ir.nodes.iter().map(|n| &n.name).collect::<Vec<_>>())
        }
        Err(e) => assert!(e.join("\n").contains("which is also `a`"), "{}", e.join("\n")),
    }
}

/// One f32 `state` A/B/C of `len` elements, with the gemm `body`.
fn one(len: &str, body: &str) -> String {
    let mut t = format!("{KERNELS}[dims]\nbig = 2147483647\nlen = {len}\n");
    t += &buffer("p", "len", "input");
    t += &buffer("q", "len", "state");
    t += &buffer("y", "len", "output");
    t + &gemm("mm", body) + &copy("out", "q", "y")
}

#[test]
fn the_largest_sizes_strides_and_counts_are_refused_without_overflow() {
    for body in [
        "a = \"p\", b = \"p\", c = \"q\", m = \"big\", n = \"big\", k = \"big\", compute = \"f32\"",
        "a = \"p\", b = \"p\", c = \"q\", m = 2, n = 1, k = 1, ldc = \"big\", compute = \"f32\"",
        "a = \"p\", b = \"p\", c = \"q\", m = \"big\", n = \"big\", k = \"big\", lda = \"big\", ldb = \"big\", ldc = \"big\", compute = \"f32\", batch = { count = \"big\", stride_a = \"big\", stride_b = \"big\", stride_c = \"big\" }",
        "a = \"p\", b = \"p\", c = \"q\", m = 1, n = 1, k = 1, compute = \"f32\", batch = { count = \"big\", stride_a = 0, stride_b = 0, stride_c = 1 }",
    ] {
        let e = errors(&one("16", body));
        assert!(e.contains("touching"), "{body}: {e}");
    }
    // One row touches only its row, whatever the ld.
    let ok = one(
        "16",
        "a = \"p\", b = \"p\", c = \"q\", m = 1, n = 1, k = 1, lda = \"big\", ldb = \"big\", ldc = \"big\", compute = \"f32\"",
    );
    assert!(analyze_files(&ok, None).is_ok());
    // 2^31 (one past cuBLAS's int) is refused as a size.
    let e = errors(&one("16", "a = \"p\", b = \"p\", c = \"q\", m = 2147483648, n = 1, k = 1, compute = \"f32\""));
    assert!(e.contains("must be from 1 to 2147483647"), "{e}");
}

#[test]
fn transposed_operands_are_measured_as_stored() {
    // m = 4, k = 2, trans_a: A stored 2 x 4; lda = 2 (k, the used row length) is too short.
    let e = errors(&one(
        "16",
        "a = \"p\", b = \"p\", c = \"q\", m = 4, n = 2, k = 2, trans_a = true, lda = 2, compute = \"f32\"",
    ));
    assert!(e.contains("`lda` = 2 is less than the row length of A (2 x 4 row-major)"), "{e}");
    // trans_b: B stored n x k = 4 x 2 with ldb = 2; the last element (3 * 2 + 1) fits 8, not 7.
    let ok = one("8", "a = \"p\", b = \"p\", c = \"q\", m = 2, n = 4, k = 2, trans_b = true, compute = \"f32\"");
    let a = analyze_files(&ok, None).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert!(a.ir.nodes.iter().any(|n| matches!(n.op, NodeOp::Gemm(_))));
    let e =
        errors(&one("7", "a = \"p\", b = \"p\", c = \"q\", m = 2, n = 4, k = 2, trans_b = true, compute = \"f32\""));
    assert!(e.contains("B is 4 x 2 row-major with ldb = 2, touching 8 elements"), "{e}");
    // ldc padding counts up to the last row's end, not a whole last row of ldc.
    let ok = one("7", "a = \"p\", b = \"p\", c = \"q\", m = 2, n = 2, k = 2, ldc = 5, compute = \"f32\"");
    assert!(analyze_files(&ok, None).is_ok());
    let e = errors(&one("6", "a = \"p\", b = \"p\", c = \"q\", m = 2, n = 2, k = 2, ldc = 5, compute = \"f32\""));
    assert!(e.contains("C is 2 x 2 row-major with ldc = 5, touching 7 elements"), "{e}");
}

#[test]
fn batches_writing_one_c_are_refused_and_shared_a_b_are_allowed() {
    // stride_c = 0: every product writes the same C.
    let e = errors(&one(
        "16",
        "a = \"p\", b = \"p\", c = \"q\", m = 2, n = 2, k = 2, compute = \"f32\", batch = { count = 2, stride_a = 0, stride_b = 0, stride_c = 0 }",
    ));
    assert!(e.contains("`batch.stride_c` = 0 is less than one C matrix's span"), "{e}");
    // Interleaved rows (ldc = 4, stride_c = 2) would not collide, but are refused (conservative).
    let e = errors(&one(
        "16",
        "a = \"p\", b = \"p\", c = \"q\", m = 2, n = 2, k = 2, ldc = 4, compute = \"f32\", batch = { count = 2, stride_a = 0, stride_b = 0, stride_c = 2 }",
    ));
    assert!(e.contains("`batch.stride_c` = 2 is less than one C matrix's span (6 elements)"), "{e}");
    let ok = one(
        "16",
        "a = \"p\", b = \"p\", c = \"q\", m = 2, n = 2, k = 2, compute = \"f32\", batch = { count = 4, stride_a = 0, stride_b = 0 }",
    );
    assert!(analyze_files(&ok, None).is_ok());
}
