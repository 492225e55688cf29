//! Arguments bound by name (#28.7): a kernel parameter without an entry in the node's `args`
//! takes the spec's dim, buffer or scalar of its own name. Written entries win; a name that does
//! not fit the parameter is a located error saying it was bound by name; the binding is the
//! same graph as writing it out, and it is shown in the struct's docs, `DOT` and `MERMAID`.

use std::path::{Path, PathBuf};

use kgraph_codegen::graph::{analyze, generate, Analysis, GraphRequest};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// Analyzes `text` as `g.toml`; other paths are read from `files`, then the workspace.
fn run(text: &str, files: &[(&str, &str)]) -> Result<Analysis, Vec<String>> {
    let root = workspace_root();
    let read_file = |p: &str| match files.iter().find(|(path, _)| *path == p) {
        Some((_, t)) => Ok(t.to_string()),
        None => std::fs::read_to_string(root.join(p)),
    };
    let req = GraphRequest { spec_path: "g.toml", spec_text: text, struct_name: None, root: "", read_file: &read_file };
    analyze(&req)
}

fn spec(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path)).expect("spec")
}

/// `tests/graphs/test_short.toml` with every argument written out.
fn written_out() -> String {
    spec("tests/graphs/test_short.toml")
        .replace(
            "kernel = \"tg_prep\" # x, s, n by name\ngrid = \"ceil(n / 256)\"\nblock = 256\n",
            "kernel = \"tg_prep\"\ngrid = \"ceil(n / 256)\"\nblock = 256\nargs = { x = \"x\", s = \"s\", n = \"n\" }\n",
        )
        .replace(
            "kernel = \"tg_branch\" # s, y, k, n by name\ngrid = \"ceil(n / 256)\"\nblock = 256\n",
            "kernel = \"tg_branch\"\ngrid = \"ceil(n / 256)\"\nblock = 256\nargs = { s = \"s\", y = \"y\", k = \"k\", n = \"n\" }\n",
        )
        .replace("args = { x = \"y\" }", "args = { acc = \"acc\", x = \"y\", n = \"n\" }")
}

#[test]
fn a_three_node_spec_in_30_lines_binds_its_arguments_by_name() {
    let text = spec("tests/graphs/test_short.toml");
    assert!(text.lines().count() <= 30, "{} lines", text.lines().count());
    let short = run(&text, &[]).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let long_text = written_out();
    assert_eq!(long_text.matches("args = {").count(), 3, "every argument written: {long_text}");
    let long = run(&long_text, &[]).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    assert_eq!(short.ir.nodes.len(), 3);
    for (s, l) in short.ir.nodes.iter().zip(&long.ir.nodes) {
        let bindings = |n: &kgraph_codegen::graph::ir::Node| {
            n.args.iter().map(|a| (a.param.clone(), format!("{:?}", a.binding))).collect::<Vec<_>>()
        };
        assert_eq!(bindings(s), bindings(l), "node `{}` binds as if written", s.name);
        assert!(l.args.iter().all(|a| !a.by_name));
    }
    let by_name: Vec<Vec<&str>> = short
        .ir
        .nodes
        .iter()
        .map(|n| n.args.iter().filter(|a| a.by_name).map(|a| a.param.as_str()).collect())
        .collect();
    assert_eq!(by_name, [vec!["x", "s", "n"], vec!["s", "y", "k", "n"], vec!["acc", "n"]], "`x = \"y\"` is written");
    let edges = |a: &Analysis| a.edges.iter().map(|e| (e.from, e.to)).collect::<Vec<_>>();
    assert_eq!(edges(&short), edges(&long));
}

#[test]
fn by_name_bindings_are_shown_in_the_diagrams_and_the_struct_docs() {
    let short = run(&spec("tests/graphs/test_short.toml"), &[]).unwrap();
    let dot = short.dot("TestShort");
    assert!(dot.contains("n0 [label=\"tg_prep\\ntg_prep\\nby name: x, s, n\"]"), "{dot}");
    assert!(dot.contains("n2 [label=\"tg_accumulate\\ntg_accumulate\\nby name: acc, n\"]"), "{dot}");
    assert!(short.mermaid().contains("n1[\"tg_branch<br/>tg_branch<br/>by name: s, y, k, n\"]"));
    let text = spec("tests/graphs/test_short.toml");
    let read_file = |p: &str| std::fs::read_to_string(workspace_root().join(p));
    let req =
        GraphRequest { spec_path: "g.toml", spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    let code = generate(&req).unwrap().to_string();
    assert!(code.contains("`k = k (by name)`"), "the nodes table marks it");
    assert!(code.contains("An argument marked *(by name)* is not written in the node's `args`"));
    // Written out, nothing is marked.
    let long = run(&written_out(), &[]).unwrap();
    assert!(!long.dot("TestShort").contains("by name"));
}

/// A spec with dim `n`, buffers `x` (input) and `y` (output) of `n` floats, scalar `a`, and one
/// `tg_affine` node (x, y, a, b, n) with `args`.
fn affine(args: &str) -> String {
    format!(
        "[kernels]\nsource = \"tests/gpu/graph/kernels.rs\"\nmodule = \"crate::graph::kernels\"\n[dims]\nn = 64\n\
         [buffers]\nx = {{ dtype = \"f32\", len = \"n\", role = \"input\" }}\ny = {{ dtype = \"f32\", len = \"n\", role = \"output\" }}\n\
         [scalars]\na = {{ dtype = \"f32\", default = 2.0 }}\n[[node]]\nkernel = \"tg_affine\"\ngrid = 1\nblock = 64\n{args}"
    )
}

#[test]
fn written_entries_win_and_a_name_that_does_not_fit_is_a_located_error() {
    // `b` has no spec name: written. `n` written as a literal wins over the dim `n`.
    let a = run(&affine("args = { b = 0.5, n = 32 }\n"), &[]).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let args: Vec<(&str, bool)> = a.ir.nodes[0].args.iter().map(|a| (a.param.as_str(), a.by_name)).collect();
    assert_eq!(args, [("x", true), ("y", true), ("a", true), ("b", false), ("n", false)]);
    assert!(format!("{:?}", a.ir.nodes[0].args[4].binding).contains("src: \"32\""), "the written value");
    // Without `b`, it is missing, and the message says how to bind it.
    let e = run(&affine("args = { n = 32 }\n"), &[]).unwrap_err();
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(e[0].contains("missing argument(s) `b` for kernel `tg_affine("), "{}", e[0]);
    assert!(e[0].contains("it then binds by name"), "{}", e[0]);
    // No `args` at all: `b` is missing, at the node's `kernel`.
    let e = run(&affine(""), &[]).unwrap_err();
    assert!(e[0].starts_with("g.toml:12:10: missing argument(s) `b`"), "{}", e[0]);
    // A dim named like a buffer parameter: the error says the binding was by name.
    let text = affine("args = { b = 0.5 }\n")
        .replace("[buffers]\nx = ", "[buffers]\nxx = ")
        .replace("[dims]\nn = 64\n", "[dims]\nn = 64\nx = 3\n");
    let e = run(&text, &[]).unwrap_err().join("\n");
    assert!(e.contains("parameter `x: &[f32]` of `tg_affine` (bound by name: not in `args`"), "{e}");
    assert!(e.contains("g.toml:13:10:"), "at the node's kernel: {e}");
}

#[test]
fn an_included_specs_by_name_arguments_follow_the_include_bindings() {
    // The included spec binds `x`, `y` and `n` by name; the include maps its `x` and `y` to this
    // spec's `src` and `dst`, whose own `x` and `y` must not be what the spliced node gets.
    let sub = "[kernels]\nsource = \"tests/gpu/graph/kernels.rs\"\nmodule = \"crate::graph::kernels\"\n[dims]\nn = 64\n\
               [buffers]\nx = { dtype = \"f32\", len = \"n\", role = \"input\" }\ny = { dtype = \"f32\", len = \"n\", role = \"output\" }\n\
               [[node]]\nname = \"copy\"\nkernel = \"tg_prep\"\ngrid = 1\nblock = 64\nargs = { s = \"y\" }\n";
    let parent = "[kernels]\nsource = \"tests/gpu/graph/kernels.rs\"\nmodule = \"crate::graph::kernels\"\n[dims]\nn = 64\n\
                  [buffers]\nx = { dtype = \"f32\", len = \"n\", role = \"input\" }\ny = { dtype = \"f32\", len = \"n\", role = \"output\" }\n\
                  src = { dtype = \"f32\", len = \"n\", role = \"input\" }\ndst = { dtype = \"f32\", len = \"n\", role = \"output\" }\n\
                  [[node]]\nname = \"own\"\nkernel = \"tg_prep\"\ngrid = 1\nblock = 64\nargs = { s = \"y\" }\n\
                  [[include]]\nname = \"inc\"\nspec = \"sub.toml\"\nbuffers = { x = \"src\", y = \"dst\" }\n";
    let a = run(parent, &[("sub.toml", sub)]).unwrap_or_else(|e| panic!("{}", e.join("\n")));
    let buffer_names = |n: usize| -> Vec<String> {
        a.ir.nodes[n]
            .args
            .iter()
            .filter_map(|x| x.binding.buffer_access())
            .map(|(b, _)| a.ir.buffers[b].name.clone())
            .collect()
    };
    assert_eq!(a.ir.nodes[1].name, "inc_copy");
    assert_eq!(buffer_names(0), ["x", "y"], "own node: by name");
    assert_eq!(buffer_names(1), ["src", "dst"], "spliced node: through the include's bindings");
}

/// `code` without its doc attributes and with the `DOT`/`MERMAID` strings emptied: what is
/// left is what runs.
fn without_docs_and_diagrams(code: &str) -> String {
    let mut out = code.to_string();
    for marker in ["# [doc = ", "const DOT : & 'static str = ", "const MERMAID : & 'static str = "] {
        let mut from = 0;
        while let Some(at) = out[from..].find(marker).map(|i| from + i + marker.len()) {
            let end = string_literal_end(&out[at..]) + at;
            out.replace_range(at..end, "\"\"");
            from = at + 2;
        }
    }
    // The docs' line count differs too (a note on arguments bound by name).
    out.replace("# [doc = \"\"] ", "")
}

/// The length of the string literal (plain or raw) at the start of `s`.
fn string_literal_end(s: &str) -> usize {
    if let Some(raw) = s.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let close = format!("\"{}", "#".repeat(hashes));
        let body = 1 + hashes + 1;
        return body + s[body..].find(&close).expect("raw string end") + close.len();
    }
    let bytes = s.as_bytes();
    let mut end = 1;
    while bytes[end] != b'"' {
        end += if bytes[end] == b'\\' { 2 } else { 1 };
    }
    end + 1
}

#[test]
fn the_shortened_model_spec_generates_the_code_it_did_with_every_argument_written() {
    let root = workspace_root();
    let read_file = |p: &str| std::fs::read_to_string(root.join(p));
    let generated = |text: &str| {
        let req = GraphRequest {
            spec_path: "graphs/perception.toml",
            spec_text: text,
            struct_name: None,
            root: "",
            read_file: &read_file,
        };
        generate(&req).unwrap_or_else(|e| panic!("{}", e.join("\n"))).to_string()
    };
    let short = spec("graphs/perception.toml");
    let long = spec("macros/core/tests/fixtures/perception_written_out.toml");
    assert!(short.len() + 250 < long.len(), "shorter: {} vs {} bytes", short.len(), long.len());
    let (short_code, long_code) = (generated(&short), generated(&long));
    assert_ne!(short_code, long_code, "the docs and diagrams say what is bound by name");
    assert!(short_code.contains("by name: snap, batch, feat"), "the DOT label of `features`");
    assert_eq!(without_docs_and_diagrams(&short_code), without_docs_and_diagrams(&long_code));
}
