//! `[[include]]`: another spec's nodes spliced into this one — the names, substituted dims,
//! bindings and PDL of the splice, and the located error of each rule (binding errors in the
//! including spec, errors of the included spec in its own file).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kgraph_codegen::graph::ir::{Binding, Value};
use kgraph_codegen::graph::spec::include::substitute;
use kgraph_codegen::graph::{analyze, Analysis, GraphRequest};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// Analyzes `files[main]`; other paths are served from `files`, then from the workspace (the
/// kernel declarations `tests/gpu/graph/kernels.rs`, `tests/graphs/test_affine.toml`).
fn analyze_files(files: &[(&str, &str)], main: &str) -> Result<Analysis, Vec<String>> {
    let files: BTreeMap<&str, &str> = files.iter().copied().collect();
    let root = workspace_root();
    let read_file = |p: &str| match files.get(p) {
        Some(t) => Ok(t.to_string()),
        None => std::fs::read_to_string(root.join(p)),
    };
    let text = read_file(main).expect("main spec");
    let req = GraphRequest { spec_path: main, spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

fn errors_of(files: &[(&str, &str)], main: &str) -> Vec<String> {
    match analyze_files(files, main) {
        Ok(a) => {
            panic!("{main} must not validate; nodes: {:?}", a.ir.nodes.iter().map(|n| &n.name).collect::<Vec<_>>())
        }
        Err(e) => e,
    }
}

const KERNELS: &str = "[kernels]\nsource = \"tests/gpu/graph/kernels.rs\"\nmodule = \"crate::graph::kernels\"\n";

/// A parent spec with dim `m` and buffers `x` (input) and `y` (output) of `m` floats, then
/// `body`.
fn parent(m: i64, body: &str) -> String {
    let mut t = format!("{KERNELS}[dims]\nm = {m}\n");
    for (name, role) in [("x", "input"), ("y", "output")] {
        t += &format!("[buffers.{name}]\ndtype = \"f32\"\nlen = \"m\"\nrole = \"{role}\"\n");
    }
    t + body
}

/// Buffer `mid` (scratch, `m` floats) and scalar `a` (f32, 2.0), for [`parent`]'s body.
const MID_A: &str =
    "[buffers.mid]\ndtype = \"f32\"\nlen = \"m\"\nrole = \"scratch\"\n[scalars.a]\ndtype = \"f32\"\ndefault = 2.0\n";

const CHAIN: &str = r#"
[buffers.mid]
dtype = "f32"
len = "m"
role = "scratch"

[scalars.a]
dtype = "f32"
default = 2.0

[[include]]
name = "first"
spec = "tests/graphs/test_affine.toml"
buffers = { x = "x", y = "mid" }
scalars = { a = "a" }

[[include]]
name = "second"
spec = "tests/graphs/test_affine.toml"
buffers = { x = "mid", y = "y" }
scalars = { a = 3.0 }
"#;

fn names(a: &Analysis) -> Vec<&str> {
    a.ir.nodes.iter().map(|n| n.name.as_str()).collect()
}

#[test]
fn test_include_spec_splices_two_affines_before_its_own_node() {
    let a = analyze_files(&[], "tests/graphs/test_include.toml").unwrap_or_else(|e| panic!("{}", e.join("\n\n")));
    assert_eq!(names(&a), ["first_affine", "second_affine", "scale"]);
    let scalars: Vec<(&str, String)> = a.ir.scalars.iter().map(|s| (s.name.as_str(), s.default.text())).collect();
    assert_eq!(scalars, [("a", "2.0".to_string()), ("b2", "0.5".to_string()), ("first_b", "-0.25".to_string())]);
    let buffers: Vec<&str> = a.ir.buffers.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(buffers, ["x", "mid", "y", "w", "z"]);
    let edges: Vec<(usize, usize)> = a.edges.iter().map(|e| (e.from, e.to)).collect();
    assert_eq!(edges, [(0, 1), (1, 2)], "the chain x -> mid -> y -> z crosses the include boundaries");
    let includes: Vec<(&str, &str)> = a.ir.includes.iter().map(|i| (i.name.as_str(), i.spec.as_str())).collect();
    assert_eq!(includes, [("first", "tests/graphs/test_affine.toml"), ("second", "tests/graphs/test_affine.toml")]);
}

#[test]
fn included_dims_are_substituted_and_scalars_bound_or_prefixed() {
    // The parent's `m` differs from the included `n` = 4096 only in name: no `n` here.
    let a = analyze_files(&[("p.toml", &parent(4096, CHAIN))], "p.toml").unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(names(&a), ["first_affine", "second_affine"]);
    let second = &a.ir.nodes[1];
    let launch = second.launch().expect("a kernel node");
    assert_eq!(launch.grid.src, "ceil(4096 / 256)");
    assert_eq!(launch.grid.value, [16, 1, 1]);
    let arg = |node: usize, p: &str| a.ir.nodes[node].args.iter().find(|x| x.param == p).unwrap().binding.clone();
    let scalar = |s: usize| a.ir.scalars[s].name.clone();
    assert!(matches!(arg(0, "a"), Binding::Scalar { scalar: s } if scalar(s) == "a"));
    assert!(matches!(arg(0, "b"), Binding::Scalar { scalar: s } if scalar(s) == "first_b"));
    assert!(matches!(arg(1, "a"), Binding::Const { value: Value::Float(f), .. } if f == "3.0"));
    assert!(matches!(arg(1, "b"), Binding::Scalar { scalar: s } if scalar(s) == "second_b"));
    assert!(matches!(arg(1, "n"), Binding::Const { value: Value::Int(4096), .. }));
    let buffer = |node: usize, p: &str| match arg(node, p) {
        Binding::Buffer { buffer, .. } => a.ir.buffers[buffer].name.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!([buffer(0, "x"), buffer(0, "y"), buffer(1, "x"), buffer(1, "y")], ["x", "mid", "mid", "y"]);
}

#[test]
fn includes_take_their_place_in_node_order_and_controls_may_wrap_them() {
    let body = r#"
[[node]]
name = "pre"
kernel = "tg_affine"
grid = 16
block = 256
args = { x = "x", y = "mid", a = "a", b = 0.0, n = "m" }

[[include]]
name = "inc"
spec = "tests/graphs/test_affine.toml"
buffers = { x = "mid", y = "y" }

[[while]]
name = "twice"
nodes = ["pre", "inc_affine"]
repeat = 2
"#;
    let p = parent(4096, &format!("{MID_A}{body}"));
    let a = analyze_files(&[("p.toml", &p)], "p.toml").unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(names(&a), ["pre", "inc_affine"]);
    assert_eq!(a.ir.controls.len(), 1);
    assert_eq!((a.ir.controls[0].first, a.ir.controls[0].len), (0, 2));
}

const SCRATCH_SUB: &str = r#"
[kernels]
source = "tests/gpu/graph/kernels.rs"
module = "crate::graph::kernels"
[dims]
n = 8
[buffers.src]
dtype = "f32"
len = "n"
role = "input"
[buffers.tmp]
dtype = "f32"
len = "2 * n - n"
role = "scratch"
[buffers.dst]
dtype = "f32"
len = "n"
role = "output"
[scalars.k]
dtype = "f32"
default = 1.5
[[node]]
name = "fill"
kernel = "tg_affine"
grid = 1
block = "n"
args = { x = "src", y = "tmp", a = "k", b = 0.0, n = "n" }
[[node]]
name = "drain"
kernel = "tg_affine"
grid = 1
block = "n"
args = { x = "tmp", y = "dst", a = 1.0, b = "k", n = "n" }
"#;

#[test]
fn unbound_scratch_becomes_a_prefixed_buffer_of_constant_length() {
    let body = "[[include]]\nname = \"s\"\nspec = \"sub.toml\"\nbuffers = { src = \"x\", dst = \"y\" }\n";
    let files = [("sub.toml", SCRATCH_SUB), ("p.toml", &parent(8, body))];
    let a = analyze_files(&files, "p.toml").unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(names(&a), ["s_fill", "s_drain"]);
    let tmp = a.ir.buffers.iter().find(|b| b.name == "s_tmp").expect("scratch `s_tmp`");
    assert_eq!((tmp.len, tmp.len_src.as_str(), tmp.role.name()), (8, "8", "scratch"));
    let k = a.ir.scalars.iter().find(|s| s.name == "s_k").expect("scalar `s_k`");
    assert_eq!(k.default.text(), "1.5");
}

#[test]
fn an_included_specs_plan_memory_false_keeps_its_scratch_out_of_the_plan() {
    let body = "[[include]]\nname = \"s\"\nspec = \"sub.toml\"\nbuffers = { src = \"x\", dst = \"y\" }\n";
    for (sub_top, want) in [("", true), ("plan_memory = true", true), ("plan_memory = false", false)] {
        let sub = format!("{sub_top}\n{SCRATCH_SUB}");
        let files = [("sub.toml", sub.as_str()), ("p.toml", &parent(8, body))];
        let a = analyze_files(&files, "p.toml").unwrap_or_else(|e| panic!("{}", e.join("\n")));
        let tmp = a.ir.buffers.iter().find(|b| b.name == "s_tmp").expect("scratch `s_tmp`");
        assert_eq!(tmp.plan, want, "included `{sub_top}`");
    }
}

fn pdl_sub(top: &str) -> String {
    format!(
        "{top}\n{KERNELS}[dims]\nn = 256\n[buffers.x]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"input\"\n\
         [buffers.t]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"scratch\"\n\
         [buffers.y]\ndtype = \"f32\"\nlen = \"n\"\nrole = \"output\"\n\
         [[node]]\nname = \"p1\"\nkernel = \"tg_pdl_affine\"\ngrid = 1\nblock = \"n\"\n\
         args = {{ x = \"x\", y = \"t\", a = 1.0, b = 0.0, n = \"n\" }}\n\
         [[node]]\nname = \"p2\"\nkernel = \"tg_pdl_affine\"\npdl = false\ngrid = 1\nblock = \"n\"\n\
         args = {{ x = \"t\", y = \"y\", a = 1.0, b = 0.0, n = \"n\" }}\n"
    )
}

#[test]
fn the_included_specs_pdl_applies_to_its_nodes_unless_a_node_sets_its_own() {
    let include = "[[include]]\nname = \"q\"\nspec = \"sub.toml\"\nbuffers = { x = \"x\", y = \"y\" }\n";
    for (sub_top, parent_top, want) in [
        ("pdl = true", "", [true, false]),
        ("", "pdl = true", [false, false]),
        ("pdl = false", "pdl = true", [false, false]),
    ] {
        let p = format!("{parent_top}\n{}", parent(256, include));
        let sub = pdl_sub(sub_top);
        let a = analyze_files(&[("sub.toml", &sub), ("p.toml", &p)], "p.toml")
            .unwrap_or_else(|e| panic!("{sub_top} / {parent_top}: {}", e.join("\n")));
        let pdl: Vec<bool> = a.ir.nodes.iter().map(|n| n.pdl).collect();
        assert_eq!(pdl, want, "included `{sub_top}`, parent `{parent_top}`");
    }
}

#[test]
fn nested_includes_prefix_twice() {
    let middle = format!(
        "{KERNELS}[dims]\nk = 4096\n[buffers.u]\ndtype = \"f32\"\nlen = \"k\"\nrole = \"input\"\n\
         [buffers.v]\ndtype = \"f32\"\nlen = \"k\"\nrole = \"output\"\n\
         [[include]]\nname = \"inner\"\nspec = \"tests/graphs/test_affine.toml\"\nbuffers = {{ x = \"u\", y = \"v\" }}\n"
    );
    let top =
        parent(4096, "[[include]]\nname = \"outer\"\nspec = \"middle.toml\"\nbuffers = { u = \"x\", v = \"y\" }\n");
    let a = analyze_files(&[("middle.toml", &middle), ("top.toml", &top)], "top.toml")
        .unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(names(&a), ["outer_inner_affine"]);
    let scalars: Vec<&str> = a.ir.scalars.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(scalars, ["outer_inner_a", "outer_inner_b"]);
    let includes: Vec<(&str, &str)> = a.ir.includes.iter().map(|i| (i.name.as_str(), i.spec.as_str())).collect();
    assert_eq!(includes, [("outer", "middle.toml"), ("outer_inner", "tests/graphs/test_affine.toml")]);
}

#[test]
fn substitution_renames_identifiers_but_not_functions_or_numbers() {
    let rename = |id: &str| match id {
        "n" => "4096".to_string(),
        "ceil" => "WRONG".to_string(),
        other => format!("p_{other}"),
    };
    assert_eq!(
        substitute("ceil(n / 256) + max (n, 1_000) * k2", rename),
        "ceil(4096 / 256) + max (4096, 1_000) * p_k2"
    );
    assert_eq!(substitute("n", rename), "4096");
}

/// Some error contains `needle`, starts at `file:line:` and quotes that line.
fn assert_located(errors: &[String], needle: &str, file: &str, line: usize) {
    let all = errors.join("\n\n");
    let Some(e) = errors.iter().find(|e| e.contains(needle)) else {
        panic!("no error containing `{needle}` in:\n{all}")
    };
    assert!(e.starts_with(&format!("{file}:{line}:")), "`{needle}` should be at {file}:{line}:\n{all}");
    assert!(e.contains(&format!(" {line} | ")), "quotes line {line}:\n{e}");
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("`{needle}` not in the spec")) + 1
}

#[test]
fn a_missing_included_file_is_an_error_at_its_path() {
    let p = parent(4096, "[[include]]\nname = \"gone\"\nspec = \"graphs/nope.toml\"\nbuffers = {}\n");
    let e = errors_of(&[("p.toml", &p)], "p.toml");
    assert_located(
        &e,
        "cannot read included spec `graphs/nope.toml` (relative to the crate root)",
        "p.toml",
        line_of(&p, "nope"),
    );
    assert!(e[0].contains("spec = \"graphs/nope.toml\"\n"), "quotes the line:\n{}", e[0]);
}

#[test]
fn an_included_file_that_is_not_a_toml_spec_is_one_error_at_its_path() {
    let p = parent(4096, "[[include]]\nname = \"k\"\nspec = \"tests/gpu/graph/kernels.rs\"\nbuffers = {}\n");
    let e = errors_of(&[("p.toml", &p), ("tests/gpu/graph/kernels.rs", "//! Rust, not TOML\n")], "p.toml");
    assert_located(
        &e,
        "`[[include]]` `spec` must name a graph spec (a `.toml` file), found `tests/gpu/graph/kernels.rs`",
        "p.toml",
        line_of(&p, "spec = \"tests/gpu"),
    );
    assert!(
        e.iter().all(|e| !e.starts_with("tests/gpu/graph/kernels.rs")),
        "nothing reported inside the .rs file:\n{e:?}"
    );
}

#[test]
fn an_include_cycle_is_an_error_naming_the_chain() {
    let a = format!("{KERNELS}[[include]]\nname = \"to_b\"\nspec = \"b.toml\"\n");
    let b = format!("{KERNELS}[[include]]\nname = \"to_a\"\nspec = \"a.toml\"\n");
    let e = errors_of(&[("a.toml", &a), ("b.toml", &b)], "a.toml");
    assert_located(&e, "include cycle: a.toml -> b.toml -> a.toml", "b.toml", line_of(&b, "spec ="));
    assert!(e[0].ends_with(&format!("= note: `b.toml` is included at a.toml:{}:8", line_of(&a, "spec ="))), "{e:?}");
    assert_eq!(e.len(), 1, "one mistake, one error: {e:?}");
}

#[test]
fn every_non_scratch_included_buffer_must_be_bound() {
    let p = parent(
        4096,
        "[[include]]\nname = \"half\"\nspec = \"tests/graphs/test_affine.toml\"\nbuffers = { x = \"x\" }\n",
    );
    let e = errors_of(&[("p.toml", &p)], "p.toml");
    assert_located(
        &e,
        "included buffer `y` of `tests/graphs/test_affine.toml` (role `output`) is not bound: add `y = \"<a buffer of this spec>\"` to this include's `buffers` (only `scratch` buffers may stay unbound)",
        "p.toml",
        line_of(&p, "buffers = { x"),
    );
}

#[test]
fn a_bound_buffer_must_have_the_included_dtype_and_length() {
    let extra = "[buffers.h]\ndtype = \"f64\"\nlen = \"m\"\nrole = \"output\"\n[buffers.short]\ndtype = \"f32\"\nlen = 16\nrole = \"output\"\n";
    let body = format!("{extra}[[include]]\nname = \"bad\"\nspec = \"tests/graphs/test_affine.toml\"\nbuffers = {{ x = \"x\", y = \"h\" }}\n[[include]]\nname = \"worse\"\nspec = \"tests/graphs/test_affine.toml\"\nbuffers = {{ x = \"x\", y = \"short\" }}\n");
    let p = parent(4096, &body);
    let e = errors_of(&[("p.toml", &p)], "p.toml");
    assert_located(
        &e,
        "included buffer `y` of `tests/graphs/test_affine.toml` is `f32`, but `h` is `f64`: a bound buffer must have the same dtype",
        "p.toml",
        line_of(&p, "y = \"h\""),
    );
    assert_located(
        &e,
        "included buffer `y` of `tests/graphs/test_affine.toml` holds 4096 elements (len = `n` with its dims), but `short` holds 16 (len = `16`): a bound buffer must have the same length",
        "p.toml",
        line_of(&p, "y = \"short\""),
    );
    // Included lengths use the included dims: m = 16 makes `x` (len = "m") too short as well.
    let e = errors_of(&[("p.toml", &parent(16, CHAIN))], "p.toml").join("\n");
    assert!(e.contains("holds 4096 elements (len = `n` with its dims), but `x` holds 16 (len = `m`)"), "{e}");
}

#[test]
fn unknown_binding_names_are_errors_with_suggestions() {
    let body = "[[include]]\nname = \"typo\"\nspec = \"tests/graphs/test_affine.toml\"\nbuffers = { x = \"x\", yy = \"y\", y = \"md\" }\nscalars = { aa = \"a\", b = \"q\" }\n";
    let p = parent(4096, &format!("{MID_A}{body}"));
    let e = errors_of(&[("p.toml", &p)], "p.toml");
    let line = line_of(&p, "yy =");
    assert_located(
        &e,
        "included spec `tests/graphs/test_affine.toml` has no buffer `yy` (its buffers: `x`, `y`)",
        "p.toml",
        line,
    );
    assert_located(&e, "unknown buffer `md` for included buffer `y` of `tests/graphs/test_affine.toml` (buffers: `x`, `y`, `mid`); did you mean `mid`?", "p.toml", line);
    let line = line_of(&p, "aa =");
    assert_located(
        &e,
        "included spec `tests/graphs/test_affine.toml` has no scalar `aa` (its scalars: `a`, `b`)",
        "p.toml",
        line,
    );
    assert_located(
        &e,
        "unknown scalar `q` for included scalar `b` of `tests/graphs/test_affine.toml` (scalars: `a`)",
        "p.toml",
        line,
    );
    // An unknown key is a read error, reported before anything is included.
    let p = parent(4096, "[[include]]\nname = \"k\"\nspec = \"tests/graphs/test_affine.toml\"\nbufers = {}\n");
    let e = errors_of(&[("p.toml", &p)], "p.toml");
    assert_located(
        &e,
        "unknown key `bufers` in `[[include]]` (expected `name`, `spec`, `buffers`, `scalars`); did you mean `buffers`?",
        "p.toml",
        line_of(&p, "bufers"),
    );
}

#[test]
fn an_error_inside_the_included_spec_is_located_in_its_file() {
    let sub = SCRATCH_SUB.replace("args = { x = \"tmp\", y = \"dst\"", "args = { x = \"tmpp\", y = \"dst\"");
    let body = "[[include]]\nname = \"s\"\nspec = \"sub.toml\"\nbuffers = { src = \"x\", dst = \"y\" }\n";
    let p = parent(8, body);
    let e = errors_of(&[("sub.toml", &sub), ("p.toml", &p)], "p.toml");
    assert_located(&e, "unknown buffer `tmpp`", "sub.toml", line_of(&sub, "tmpp"));
    let note = format!("= note: `sub.toml` is included at p.toml:{}:8", line_of(&p, "spec ="));
    assert!(e[0].ends_with(&note), "names the include:\n{}", e[0]);
    assert_eq!(e.len(), 1, "one mistake, one error: {e:?}");
}

#[test]
fn an_error_of_a_spliced_node_is_located_at_the_include_and_names_the_node() {
    // `y` of the included spec is written: binding it to an input breaks the kernel's `&mut`.
    let body = "[[include]]\nname = \"w\"\nspec = \"tests/graphs/test_affine.toml\"\nbuffers = { x = \"y\", y = \"x\" }\n\
                [[node]]\nname = \"fill\"\nkernel = \"tg_affine\"\ngrid = 16\nblock = 256\nargs = { x = \"x\", y = \"y\", a = \"a\", b = 0.0, n = \"m\" }\n";
    let p = parent(4096, &format!("[scalars.a]\ndtype = \"f32\"\ndefault = 2.0\n{body}"));
    let e = errors_of(&[("p.toml", &p)], "p.toml");
    assert_located(
        &e,
        "buffer `x` has role `input`, which kernels may not write, but parameter `y: &mut [f32]` of `tg_affine` writes it; use role `state`, `scratch` or `output` for a written buffer (in node `w_affine`, spliced from `tests/graphs/test_affine.toml` by `[[include]]` `w`)",
        "p.toml",
        line_of(&p, "[[include]]"),
    );
    assert_eq!(e.len(), 1, "{}", e.join("\n\n"));
}

#[test]
fn an_included_spec_must_use_the_same_kernels() {
    let sub = SCRATCH_SUB.replace("module = \"crate::graph::kernels\"", "module = \"crate::other\"");
    let p = parent(8, "[[include]]\nname = \"s\"\nspec = \"sub.toml\"\nbuffers = { src = \"x\", dst = \"y\" }\n");
    // The included spec is itself wrong about its module: reported in it. Give it a module
    // path that `#[kernel]` accepts for the source but differs from the parent's.
    let e = errors_of(&[("sub.toml", &sub), ("p.toml", &p)], "p.toml");
    assert!(e.iter().any(|e| e.starts_with("sub.toml:")), "{e:?}");
    let p2 = p.replace("module = \"crate::graph::kernels\"", "module = \"crate::graph::self\"");
    let e = errors_of(&[("sub.toml", SCRATCH_SUB), ("p.toml", &p2)], "p.toml");
    assert_located(
        &e,
        "included spec `sub.toml` declares its kernels in `tests/gpu/graph/kernels.rs` (module `crate::graph::kernels`), but this spec in `tests/gpu/graph/kernels.rs` (module `crate::graph::self`): an included spec must have the same `[kernels] source` and `module`",
        "p.toml",
        line_of(&p2, "spec = \"sub.toml\""),
    );
}

#[test]
fn a_prefixed_name_that_clashes_with_this_specs_is_a_duplicate_at_the_include() {
    let clash = "[scalars.first_b]\ndtype = \"f32\"\ndefault = 1.0\n";
    let body = format!("{clash}{CHAIN}[[node]]\nname = \"own\"\nkernel = \"tg_affine\"\ngrid = 16\nblock = 256\nargs = {{ x = \"x\", y = \"mid\", a = \"first_b\", b = 0.0, n = \"m\" }}\n");
    let p = parent(4096, &body);
    let e = errors_of(&[("p.toml", &p)], "p.toml");
    assert_located(&e, "duplicate name `first_b`", "p.toml", line_of(&p, "name = \"first\"") - 1);
}
