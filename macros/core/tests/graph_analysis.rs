//! What a valid spec resolves to (bindings, constants, hazards, reduced edges, names), and the
//! checks that need inline specs: value ranges, generated-name collisions, expression rules.
//! Kernel declarations are given inline, as `[kernels] source` would read them.

use kgraph_codegen::graph::dataflow::Hazard;
use kgraph_codegen::graph::ir::{Binding, Role, Value};
use kgraph_codegen::graph::{analyze, Analysis, GraphRequest};
use kgraph_codegen::syntax::naming::graph_struct_name;

const DECLS: &str = r#"
#[kernel("k.cu", unsafe(extents))] pub fn k_scale(x: &[f32; n], y: &mut [f32; n], s: f32, n: i32, m: u64);
#[kernel("k.cu", unsafe(extents))] pub fn k_step(h: &mut [f32; n], x: &[f32; n], n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_copy(x: &[f32; n], y: &mut [f32; n], n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_publish(x: &[f32; n], out: PinnedMut<[f32; n]>, n: i32);
#[kernel("k.cu", unsafe(extents))] pub fn k_echo(src: Pinned<[f32; n]>, out: PinnedMut<[f32; n]>, n: i32);
#[kernel("k.cu")] pub fn k_unchecked(x: &[f32], y: &mut [f32], n: i32);
"#;

const HEAD: &str = "[kernels]\nsource = \"decls.rs\"\nmodule = \"crate::decls\"\n";

fn run(spec: &str) -> Result<Analysis, Vec<String>> {
    let text = format!("{HEAD}{spec}");
    let read_file = |p: &str| {
        assert_eq!(p, "decls.rs");
        Ok(DECLS.to_string())
    };
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

fn errors(spec: &str) -> String {
    match run(spec) {
        Ok(_) => panic!("spec must not validate:\n{spec}"),
        Err(e) => e.join("\n"),
    }
}

fn buf(name: &str, role: &str, len: &str) -> String {
    format!("[buffers.{name}]\ndtype = \"f32\"\nlen = {len}\nrole = \"{role}\"\n")
}

#[test]
fn constants_are_evaluated_and_typed_by_their_parameter() {
    let spec = format!(
        "[dims]\nn = 300\n{}{}[[node]]\nkernel = \"k_scale\"\ngrid = \"ceil(n / 128)\"\nblock = [64, 2]\nshared = \"4 * n\"\nargs = {{ x = \"x\", y = \"y\", s = 3, n = \"2 * n - 1\", m = \"n * n\" }}\n",
        buf("x", "input", "\"2 * n\""),
        buf("y", "output", "\"2 * n\"")
    );
    let a = run(&spec).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let node = &a.ir.nodes[0];
    let l = node.launch().expect("a kernel node");
    assert_eq!((l.grid.value, l.block.value, l.shared), ([3, 1, 1], [64, 2, 1], 1200));
    let consts: Vec<(&str, &Binding)> = node.args.iter().map(|a| (a.param.as_str(), &a.binding)).collect();
    assert_eq!(consts[2], ("s", &Binding::Const { value: Value::Int(3), src: "3".into() }));
    assert_eq!(consts[3], ("n", &Binding::Const { value: Value::Int(599), src: "2 * n - 1".into() }));
    assert_eq!(consts[4], ("m", &Binding::Const { value: Value::Int(90_000), src: "n * n".into() }));
    assert_eq!(a.ir.buffers[1].role, Role::Output);
}

#[test]
fn hazards_of_every_kind_are_kept_and_reduced() {
    // read h (0) -> overwrite h (1): WAR; 1 -> 2 both write h: WAW; 2 -> 3 reads h: RAW.
    // 0 -> 2 and 0 -> 3 (and 1 -> 3) also conflict directly but are implied by the chain.
    let spec = format!(
        "[dims]\nn = 64\n{}{}{}{}\
         [[node]]\nname = \"read\"\nkernel = \"k_copy\"\ngrid = 1\nblock = 64\nargs = {{ x = \"h\", y = \"a\", n = \"n\" }}\n\
         [[node]]\nname = \"step1\"\nkernel = \"k_step\"\ngrid = 1\nblock = 64\nargs = {{ h = \"h\", x = \"x\", n = \"n\" }}\n\
         [[node]]\nname = \"step2\"\nkernel = \"k_step\"\ngrid = 1\nblock = 64\nargs = {{ h = \"h\", x = \"x\", n = \"n\" }}\n\
         [[node]]\nname = \"out\"\nkernel = \"k_copy\"\ngrid = 1\nblock = 64\nargs = {{ x = \"h\", y = \"b\", n = \"n\" }}\n",
        buf("h", "state", "\"n\""),
        buf("x", "input", "\"n\""),
        buf("a", "output", "\"n\""),
        buf("b", "output", "\"n\"")
    );
    let a = run(&spec).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let edges: Vec<(usize, usize, Vec<Hazard>)> =
        a.edges.iter().map(|e| (e.from, e.to, e.causes.iter().map(|c| c.1).collect())).collect();
    assert_eq!(edges, vec![(0, 1, vec![Hazard::War]), (1, 2, vec![Hazard::Waw]), (2, 3, vec![Hazard::Raw])]);
    assert_eq!(a.schedule.side_streams, 0, "a chain needs no side stream");
}

#[test]
fn pinned_out_writes_are_hazards_like_any_other_write() {
    // publish writes p (0); echo reads p through `Pinned` and writes q (1): RAW on p;
    // republish overwrites p (2): WAR with echo, WAW with publish (implied by 0 -> 1 -> 2).
    let spec = format!(
        "[dims]\nn = 64\n{}{}{}\
         [[node]]\nname = \"publish\"\nkernel = \"k_publish\"\ngrid = 1\nblock = 64\nargs = {{ x = \"x\", out = \"p\", n = \"n\" }}\n\
         [[node]]\nname = \"echo\"\nkernel = \"k_echo\"\ngrid = 1\nblock = 64\nargs = {{ src = \"p\", out = \"q\", n = \"n\" }}\n\
         [[node]]\nname = \"republish\"\nkernel = \"k_publish\"\ngrid = 1\nblock = 64\nargs = {{ x = \"x\", out = \"p\", n = \"n\" }}\n",
        buf("x", "input", "\"n\""),
        buf("p", "pinned_out", "\"n\""),
        buf("q", "pinned_out", "\"n\"")
    );
    let a = run(&spec).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(a.ir.buffers[1].role, Role::PinnedOut);
    assert_eq!(a.ir.nodes[0].args[1].binding, Binding::PinnedMut { buffer: 1 });
    assert_eq!(a.ir.nodes[1].args[0].binding, Binding::Pinned { buffer: 1 });
    assert_eq!(a.ir.accesses(1), vec![(1, false), (2, true)]);
    let edges: Vec<(usize, usize, Vec<Hazard>)> =
        a.edges.iter().map(|e| (e.from, e.to, e.causes.iter().map(|c| c.1).collect())).collect();
    assert_eq!(edges, vec![(0, 1, vec![Hazard::Raw]), (1, 2, vec![Hazard::War])]);
}

#[test]
fn pinned_out_is_aliased_read_early_or_left_unwritten_only_with_an_error() {
    let node = |name: &str, kernel: &str, args: &str| {
        format!("[[node]]\nname = \"{name}\"\nkernel = \"{kernel}\"\ngrid = 1\nblock = 64\nargs = {{ {args} }}\n")
    };
    let head = format!("[dims]\nn = 64\n{}{}", buf("x", "input", "\"n\""), buf("p", "pinned_out", "\"n\""));
    // The same buffer read through `Pinned` and written through `PinnedMut` by one launch.
    let aliased = format!(
        "{head}{}{}",
        node("w", "k_publish", "x = \"x\", out = \"p\", n = \"n\""),
        node("e", "k_echo", "src = \"p\", out = \"p\", n = \"n\"")
    );
    let msg = errors(&aliased);
    assert!(msg.contains("buffer `p` is passed to both `src` and `out` of kernel `k_echo"), "{msg}");
    assert!(msg.contains("one of them is `PinnedMut`: a written buffer must not be aliased"), "{msg}");
    // Read through `Pinned` before the node that writes it.
    let early = format!(
        "{head}{}{}{}",
        buf("q", "pinned_out", "\"n\""),
        node("e", "k_echo", "src = \"p\", out = \"q\", n = \"n\""),
        node("w", "k_publish", "x = \"x\", out = \"p\", n = \"n\"")
    );
    let msg = errors(&early);
    assert!(msg.contains("node `e` reads pinned_out buffer `p` before anything writes it"), "{msg}");
    assert!(msg.contains("the first node that writes it is `w`, later in the file"), "{msg}");
    // Only ever read: both the read and the missing writer are reported.
    let unwritten = format!(
        "{head}{}{}",
        buf("q", "pinned_out", "\"n\""),
        node("e", "k_echo", "src = \"p\", out = \"q\", n = \"n\"")
    );
    let msg = errors(&unwritten);
    assert!(msg.contains("node `e` reads pinned_out buffer `p` before anything writes it"), "{msg}");
    assert!(msg.contains("no node writes it"), "{msg}");
    assert!(msg.contains("pinned_out buffer `p` is never written by any node"), "{msg}");
}

#[test]
fn values_must_fit_their_parameter_type() {
    let spec = format!(
        "[dims]\nn = 64\nbig = 3000000000\n{}{}[[node]]\nkernel = \"k_scale\"\ngrid = 1\nblock = 64\nargs = {{ x = \"x\", y = \"y\", s = 16777217, n = \"big\", m = -1 }}\n",
        buf("x", "input", "\"n\""),
        buf("y", "output", "\"n\"")
    );
    let e = errors(&spec);
    assert!(e.contains("is f32: the value 16777217 does not fit exactly"), "{e}");
    assert!(e.contains("is i32: the value 3000000000 does not fit"), "{e}");
    assert!(e.contains("is u64: the value -1 does not fit"), "{e}");
}

#[test]
fn scalars_cannot_appear_in_expressions_and_generated_names_must_not_clash() {
    let spec = format!(
        "[dims]\nn = 64\n{}{}{}[scalars.s]\ndtype = \"f32\"\n[[node]]\nkernel = \"k_scale\"\ngrid = \"s\"\nblock = 64\nargs = {{ x = \"x\", y = \"upload_x\", s = \"s\", n = \"n\", m = 1 }}\n",
        buf("x", "input", "\"n\""),
        buf("upload_x", "output", "\"n\""),
        buf("capture", "scratch", "1")
    );
    let e = errors(&spec);
    assert!(e.contains("unknown dim `s` in `s`; `s` is a scalar, only dims can appear in expressions"), "{e}");
    assert!(e.contains("buffer `upload_x` would generate the method `upload_x`"), "{e}");
    assert!(
        e.contains("buffer `capture` would generate the method `capture`, which is already a method every graph has"),
        "{e}"
    );
}

#[test]
fn struct_names_come_from_the_file_stem() {
    assert_eq!(graph_struct_name("graphs/perception.toml"), "Perception");
    assert_eq!(graph_struct_name("graphs/train_step.toml"), "TrainStep");
    assert_eq!(graph_struct_name("graphs/2d-blur.toml"), "Graph2dBlur");
}

/// The first fenced block of `lang` (exactly ```` ```lang ````) in the markdown `text`.
fn fenced_block<'t>(text: &'t str, lang: &str) -> &'t str {
    let open = format!("```{lang}\n");
    let start = text.find(&open).unwrap_or_else(|| panic!("no ```{lang} block")) + open.len();
    let len = text[start..].find("```").expect("closing fence");
    &text[start..start + len]
}

#[test]
fn the_documented_example_validates_and_has_two_parallel_branches() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/graph-spec.md")).expect("docs/graph-spec.md");
    let decls = fenced_block(&doc, "rust").to_string();
    let spec = fenced_block(&doc, "toml");
    let read_file = |p: &str| {
        assert_eq!(p, "src/model.rs");
        Ok(decls.clone())
    };
    let req = GraphRequest {
        spec_path: "graphs/fusion.toml",
        spec_text: spec,
        struct_name: None,
        root: "",
        read_file: &read_file,
    };
    let a = analyze(&req).unwrap_or_else(|e| panic!("the documented example must validate:\n{}", e.join("\n\n")));
    let name = |i: usize| a.ir.nodes[i].name.as_str();
    let edges: Vec<(&str, &str)> = a.edges.iter().map(|e| (name(e.from), name(e.to))).collect();
    assert_eq!(
        edges,
        vec![
            ("normalize", "dense_a"),
            ("normalize", "dense_b"),
            ("dense_a", "add"),
            ("dense_b", "add"),
            ("add", "integrate")
        ]
    );
    assert_eq!(a.schedule.side_streams, 1, "dense_b runs beside dense_a");

    // The error shown in the docs is the one a typo there produces.
    let typo = spec.replacen("x = \"feat\"", "x = \"fet\"", 1);
    let req = GraphRequest { spec_text: &typo, ..req };
    let errors = analyze(&req).expect_err("a typo must not validate");
    assert_eq!(errors.len(), 1);
    let first_line = errors[0].lines().next().unwrap();
    assert!(doc.contains(first_line), "docs/graph-spec.md should show the real message:\n{}", errors[0]);
}

#[test]
fn macro_errors_are_spanned_and_leave_a_stub() {
    use kgraph_codegen::graph::expand;
    let out = expand(quote::quote!("graphs/does_not_exist.toml")).to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains("cannot read graph spec `graphs/does_not_exist.toml`"), "{out}");
    assert!(out.contains("pub struct DoesNotExist"), "a stub keeps later uses from cascading: {out}");

    let out = expand(quote::quote!("graphs/x.toml", nam = Foo)).to_string();
    assert!(out.contains("unknown option `nam`"), "{out}");
    let out = expand(quote::quote!(graphs)).to_string();
    assert!(out.contains("expected the spec file"), "{out}");

    // `dims = { .. }` names dims the spec has, once each.
    let out = expand(quote::quote!("tests/fixtures/dims.toml", dims = { k = 3, n = 2, n = 5 })).to_string();
    assert!(out.contains("the spec has no dim `k` (its dims: n, m)"), "{out}");
    assert!(out.contains("dim `n` is given twice"), "{out}");
    assert!(out.contains("pub struct Dims"), "a stub: {out}");
    let out = expand(quote::quote!("tests/fixtures/dims.toml", dims = { n: 3 })).to_string();
    assert!(out.contains("compile_error"), "`name = value` pairs: {out}");
}

#[test]
fn structural_errors_point_at_the_node_table() {
    let e = errors("[dims]\nn = 4\n\n[[node]]\nname = \"lonely\"\n\n[[node]]\nkernel = \"k_copy\"\n");
    assert!(
        e.contains("g.toml:7:1: node has no `kernel`"),
        "the first `[[node]]` header (after the 3 `[kernels]` lines): {e}"
    );
    assert!(e.contains("node has no `grid`") && e.contains("node has no `block`"), "{e}");
    assert!(
        e.contains("missing argument(s) `x`, `y` for kernel `k_copy(x: &[f32], y: &mut [f32], n: i32)`"),
        "`n` binds to the dim `n` by name: {e}"
    );
}

#[test]
fn a_kernel_without_extents_cannot_be_a_node() {
    let spec = r#"
[dims]
n = 64
[buffers.x]
dtype = "f32"
len = "n"
role = "input"
[buffers.y]
dtype = "f32"
len = "n"
role = "output"
[[node]]
kernel = "k_unchecked"
grid = 1
block = 64
args = { x = "x", y = "y", n = "n" }
"#;
    let errors = run(spec).expect_err("an unchecked kernel is refused");
    assert!(
        errors.iter().any(|e| e.contains("`k_unchecked` is declared without extents") && e.contains("unsafe(extents)")),
        "{errors:?}"
    );
}
