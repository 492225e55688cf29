//! Memset, memcpy, `[[while]]` and `[[if]]` in specs: what validates (and the build plan it
//! yields) and the located error of each rule.

use kgraph_codegen::graph::plan::Unit;
use kgraph_codegen::graph::{analyze, Analysis, GraphRequest};

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
"#;

fn run(body: &str) -> Result<Analysis, Vec<String>> {
    let mut text = String::from("[dims]\nn = 64\none = 1\n");
    for (name, dtype, len, role) in [
        ("x", "f32", "n", "input"),
        ("a", "f32", "n", "scratch"),
        ("b", "f32", "n", "output"),
        ("loss", "f32", "one", "scratch"),
        ("flag", "i32", "one", "input"),
        ("h", "f64", "n", "state"),
    ] {
        text += &format!("[buffers.{name}]\ndtype = \"{dtype}\"\nlen = \"{len}\"\nrole = \"{role}\"\n");
    }
    text += body;
    text += "\n[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";
    let read_file = |_: &str| Ok(DECLS.to_string());
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

/// Nodes: zero_h (memset h), stage (memcpy x -> a), copy (a -> b, a kernel), probe (b -> loss).
const NODES: &str = r#"
[[node]]
name = "zero_h"
memset = { dst = "h", value = 0 }
[[node]]
name = "stage"
memcpy = { src = "x", dst = "a" }
[[node]]
name = "copy"
kernel = "k_copy"
grid = 1
block = 64
args = { x = "a", y = "b", n = "n" }
[[node]]
name = "probe"
kernel = "k_copy"
grid = 1
block = 64
args = { x = "b", y = "loss", n = "one" }
"#;

fn errors(body: &str) -> String {
    match run(body) {
        Ok(_) => panic!("must not validate:\n{body}"),
        Err(e) => e.join("\n"),
    }
}

#[test]
fn memset_memcpy_and_a_loop_validate_into_units_and_bodies() {
    let spec = format!(
        "{NODES}\n[[while]]\nname = \"train\"\nnodes = [\"copy\", \"probe\"]\nuntil = {{ buffer = \"loss\", below = 0.5 }}\nmax = 10\n[[if]]\nname = \"maybe\"\nnodes = [\"stage\"]\nflag = \"flag\"\n"
    );
    let a = run(&spec).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(a.ir.controls.len(), 2);
    let units: Vec<Unit> = a.branched.units.iter().map(|u| u.0).collect();
    assert_eq!(a.ir.controls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["maybe", "train"], "by body");
    assert_eq!(units, [Unit::Node(0), Unit::Control(0), Unit::Control(1)], "file order: zero_h, maybe, train");
    // train reads what maybe writes (a): one edge; zero_h is independent of both.
    assert_eq!(a.branched.units[2].1, vec![(1, false)]);
    assert!(a.branched.units[1].1.is_empty());
    let body = &a.branched.bodies[1];
    assert_eq!(body.nodes.iter().map(|n| n.0).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(body.sinks, [3], "the loop's control kernel follows probe");
    assert!(a.branched.programmatic_edges().is_empty(), "no pdl in this spec");
}

#[test]
fn memset_and_memcpy_errors_are_located() {
    let e = errors("[[node]]\nname = \"z\"\nmemset = { dst = \"x\" }\n");
    assert!(e.contains("g.toml:") && e.contains("a memset writes buffer `x`, whose role `input`"), "{e}");
    let e = errors("[[node]]\nname = \"z\"\nmemset = { dst = \"h\", value = 1 }\n");
    assert!(e.contains("only the value 0 (all bytes zero) can be set"), "{e}");
    let e = errors("[[node]]\nname = \"z\"\nmemcpy = { src = \"x\", dst = \"loss\" }\n");
    assert!(e.contains("the buffers must have the same dtype and length"), "{e}");
    let e = errors("[[node]]\nname = \"z\"\nmemcpy = { src = \"x\", dst = \"nope\" }\n");
    assert!(e.contains("unknown buffer `nope` for `memcpy.dst`"), "{e}");
    let e = errors("[[node]]\nname = \"z\"\nkernel = \"k_copy\"\nmemcpy = { src = \"x\", dst = \"a\" }\n");
    assert!(e.contains("a memcpy node takes no `kernel`"), "{e}");
    let e = errors("[[node]]\nmemset = { dst = \"a\" }\n");
    assert!(e.contains("a memset, memcpy or collective node needs a `name`"), "{e}");
}

#[test]
fn control_errors_are_located() {
    let e = errors(&format!("{NODES}\n[[while]]\nname = \"w\"\nnodes = [\"stage\", \"probe\"]\nrepeat = 3\n"));
    assert!(e.contains("node `probe` does not follow `stage` in the file"), "{e}");
    let e = errors(&format!("{NODES}\n[[while]]\nname = \"w\"\nnodes = [\"copy\"]\nrepeat = 0\n"));
    assert!(e.contains("`repeat` is 0; it must be between 1 and"), "{e}");
    let e = errors(&format!(
        "{NODES}\n[[while]]\nname = \"w\"\nnodes = [\"copy\"]\nuntil = {{ buffer = \"loss\", below = 0.1 }}\n"
    ));
    assert!(e.contains("an `until` loop needs `max`"), "{e}");
    let e = errors(&format!(
        "{NODES}\n[[while]]\nname = \"w\"\nnodes = [\"copy\"]\nuntil = {{ buffer = \"flag\", below = 0.1 }}\nmax = 3\n"
    ));
    assert!(e.contains("reads its condition from device memory of dtype f32, but buffer `flag` is i32"), "{e}");
    let e = errors(&format!("{NODES}\n[[if]]\nname = \"copy\"\nnodes = [\"copy\"]\nflag = \"flag\"\n"));
    assert!(e.contains("duplicate name `copy`"), "{e}");
    let e = errors(&format!("{NODES}\n[[if]]\nname = \"i\"\nnodes = [\"copy\"]\nflag = \"flag\"\n[[if]]\nname = \"j\"\nnodes = [\"copy\"]\nflag = \"flag\"\n"));
    assert!(e.contains("node `copy` is already in the body of another control"), "{e}");
    let e = errors(&format!("{NODES}\n[[if]]\nname = \"i\"\nnodes = [\"copy\"]\nrepeat = 2\n"));
    assert!(e.contains("unknown key `repeat` in `[[if]]`"), "{e}");
    let e = errors(&format!("{NODES}\n[[while]]\nname = \"w\"\nnodes = [\"copy\"]\n"));
    assert!(e.contains("needs `repeat = n`"), "{e}");
    // Every message is located: `g.toml:line:col: ...` with the offending line quoted.
    assert!(e.starts_with("g.toml:"), "{e}");
}

/// Nodes that use the base spec's `loss`, `flag` and `h`, so a valid spec has no unused buffer.
const USE_REST: &str = "[[node]]\nname = \"zero_h\"\nmemset = { dst = \"h\" }\n[[node]]\nname = \"zero_loss\"\nmemset = { dst = \"loss\" }\n[[if]]\nname = \"maybe\"\nnodes = [\"zero_loss\"]\nflag = \"flag\"\n";

#[test]
fn collective_nodes_validate_and_their_errors_are_located() {
    let ok = format!(
        "{}[[node]]\nname = \"stage\"\nmemcpy = {{ src = \"x\", dst = \"a\" }}\n[[node]]\nname = \"avg\"\ncollective = {{ op = \"all_reduce\", reduce = \"avg\", buffer = \"a\" }}\n[[node]]\nname = \"bc\"\ncollective = {{ op = \"broadcast\", root = 0, send = \"a\", recv = \"b\" }}\n",
        USE_REST
    );
    let a = run(&ok).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert!(a.ir.has_collectives());
    // avg (node 3) and bc (node 4) are ordered: through `a`, and through the communicator.
    assert!(a.edges.iter().any(|e| (e.from, e.to) == (3, 4)), "{:?}", a.edges);
    let e = errors("[[node]]\nname = \"c\"\ncollective = { op = \"all_reduce\", buffer = \"b\" }\n");
    assert!(e.contains("`all_reduce` needs `reduce`"), "{e}");
    let e = errors("[[node]]\nname = \"c\"\ncollective = { op = \"all_gather\", buffer = \"b\" }\n");
    assert!(e.contains("`all_gather` is not in place: give `send` and `recv`"), "{e}");
    let e = errors("[[node]]\nname = \"c\"\ncollective = { op = \"all_reduce\", reduce = \"mean\", buffer = \"b\" }\n");
    assert!(e.contains("unknown reduction `mean`"), "{e}");
    let e = errors("[[node]]\nname = \"c\"\ncollective = { op = \"all_reduce\", reduce = \"sum\", send = \"x\", recv = \"loss\" }\n");
    assert!(e.contains("send and recv must have the same length"), "{e}");
    let e = errors("[[node]]\nname = \"c\"\ncollective = { op = \"broadcast\", buffer = \"x\" }\n");
    assert!(e.contains("a collective writes buffer `x`, whose role `input`"), "{e}");
    let e = errors(
        "[[node]]\nname = \"c\"\ncollective = { op = \"all_reduce\", reduce = \"sum\", buffer = \"flag\", root = 1 }\n",
    );
    assert!(e.contains("only `broadcast` takes a `root`"), "{e}");
    assert!(e.starts_with("g.toml:"), "{e}");
}

/// A collective node on `h` after NODES, for a conditional body.
const AVG: &str = "[[node]]\nname = \"avg\"\ncollective = { op = \"all_reduce\", reduce = \"sum\", buffer = \"h\" }\n";

#[test]
fn a_collective_runs_only_in_a_body_every_rank_runs_alike() {
    // An `[[if]]` flag and an `until` buffer are each rank's device data: refused, at the node.
    let conditions = [
        ("[[if]]\nname = \"maybe\"\nnodes = [\"avg\"]\nflag = \"flag\"\n", "`[[if]]` `maybe`", "its `flag`"),
        (
            "[[while]]\nname = \"fit\"\nnodes = [\"avg\"]\nuntil = { buffer = \"b\", below = 0.5 }\nmax = 4\n[[if]]\nname = \"gate\"\nnodes = [\"stage\"]\nflag = \"flag\"\n",
            "`[[while]]` `fit`",
            "its `until` buffer",
        ),
    ];
    for (control, what, condition) in conditions {
        let e = errors(&format!("{NODES}{AVG}{control}"));
        assert_eq!(e.matches("g.toml:").count(), 1, "one error:\n{e}");
        assert!(
            e.contains(&format!("collective node `avg` is in the body of {what}, whose condition ({condition}) is device data of each rank")),
            "{e}"
        );
        assert!(e.contains("docs/multi-gpu.md") && e.contains("move the collective out of the body"), "{e}");
        assert!(e.contains("nodes = [\"avg\"]\n"), "quotes the body's line:\n{e}");
    }
    // A `repeat` count is a constant of the build, the same on every rank.
    let gate = "[[if]]\nname = \"gate\"\nnodes = [\"stage\"]\nflag = \"flag\"\n";
    let a = run(&format!("{NODES}{AVG}[[while]]\nname = \"k\"\nnodes = [\"avg\"]\nrepeat = 3\n{gate}"));
    assert_eq!(a.unwrap_or_else(|e| panic!("{}", e.join("\n"))).ir.controls.len(), 2);
}
