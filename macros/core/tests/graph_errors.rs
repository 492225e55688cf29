//! Every compile-fail spec in `tests/ui/graph/` is rejected by the analysis alone (no compiler
//! in the loop), and every message starts with the spec's `file:line:col` and quotes the line.
//! The exact texts are pinned by the trybuild `.stderr` files; this test runs in milliseconds.

use std::path::{Path, PathBuf};

use kgraph_codegen::graph::{analyze_with, GraphRequest, Options};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// A record folder with `test_graph.kernels` as nvcc compiles `tests/kernels/test_graph.cu`
/// for the kernels the PDL rule looks up: `tg_pdl_affine` waits on its grid dependency,
/// `tg_affine` does not (so `pdl_without_wait.toml` fails as it does under trybuild, where the
/// real records are read).
fn record_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("graph-errors-records");
    std::fs::create_dir_all(&dir).unwrap();
    let record = "kgraph-kernels 1\n\
        entry tg_affine visible=1 pdl_wait=0 pdl_trigger=0 calls=0\nend\n\
        entry tg_pdl_affine visible=1 pdl_wait=1 pdl_trigger=1 calls=0\nend\n";
    std::fs::write(dir.join("test_graph.kernels"), record).unwrap();
    dir
}

fn errors_of(rel: &str) -> Vec<String> {
    let root = workspace_root();
    let text = std::fs::read_to_string(root.join(rel)).expect("spec");
    let read_file = |p: &str| std::fs::read_to_string(root.join(p));
    let req = GraphRequest { spec_path: rel, spec_text: &text, struct_name: None, root: "", read_file: &read_file };
    // As `graph!` analyzes a spec it expands without `repeat` or `dims`: `resident = true` holds.
    let dir = record_dir();
    match analyze_with(&req, &Options { record_dir: Some(&dir), resident: true, ..Options::default() }) {
        Ok(_) => panic!("{rel} must not validate"),
        Err(e) => e,
    }
}

#[test]
fn every_ui_spec_fails_with_positioned_messages() {
    let dir = workspace_root().join("tests/ui/graph");
    let mut specs: Vec<String> = std::fs::read_dir(&dir)
        .expect("tests/ui/graph")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    specs.sort();
    assert!(specs.len() >= 16, "expected at least 16 compile-fail specs, found {}", specs.len());
    for name in specs {
        let rel = format!("tests/ui/graph/{name}");
        let errors = errors_of(&rel);
        assert!(!errors.is_empty());
        for e in &errors {
            let (pos, rest) = e.split_once(": ").expect("`file:line:col: message`");
            let parts: Vec<&str> = pos.split(':').collect();
            assert_eq!(parts.len(), 3, "{e}");
            // An error of an included spec is in that spec's file, with a note naming the include.
            if parts[0] != rel {
                assert!(e.contains(&format!("is included at {rel}:")), "{e}");
            }
            let line: usize = parts[1].parse().expect("line number");
            let col: usize = parts[2].parse().expect("column number");
            assert!(line >= 1 && col >= 1);
            let text = std::fs::read_to_string(workspace_root().join(parts[0])).unwrap();
            let quoted = text.lines().nth(line - 1).unwrap();
            assert!(rest.contains(&format!(" {line} | {quoted}")), "{e}\nshould quote line {line}: {quoted}");
        }
        if std::env::var_os("SHOW").is_some() {
            println!("==== {name}\n{}\n", errors.join("\n\n"));
        }
    }
}

#[test]
fn all_errors_of_one_spec_are_reported_together() {
    let errors = errors_of("tests/ui/graph/errors_reported_together.toml");
    let joined = errors.join("\n");
    for needle in ["unknown dim `q`", "unknown buffer `z`", "extra argument `c`", "missing argument(s) `b`"] {
        assert!(joined.contains(needle), "missing `{needle}` in:\n{joined}");
    }
}
