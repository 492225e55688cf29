//! Snapshots of what `graph!` generates for every spec of the workspace (formatted with
//! prettyplease): the reference model's `graphs/`, the GPU suite's `tests/graphs/` and the bench's
//! `examples/bench/graphs/`, and of each spec's derived dependency edges and capture schedule
//! (PDL launches marked). Snapshots are named by the spec's file stem (unique over the three
//! folders). New specs are picked up automatically; review changes with `cargo insta review`.

use std::path::{Path, PathBuf};

use kgraph_codegen::graph::{analyze, dataflow::Step, generate, GraphRequest};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// The folders holding the workspace's graph specs, relative to the workspace root.
const SPEC_DIRS: [&str; 3] = ["graphs", "tests/graphs", "examples/bench/graphs"];

/// Every spec of [`SPEC_DIRS`], as a path relative to the workspace root (as `graph!` names it).
fn specs() -> Vec<String> {
    let mut specs = Vec::new();
    for dir in SPEC_DIRS {
        let entries = std::fs::read_dir(workspace_root().join(dir)).unwrap_or_else(|e| panic!("{dir}/ folder: {e}"));
        let mut names: Vec<String> = entries
            .map(|e| e.expect("dir entry").file_name().into_string().expect("UTF-8 file name"))
            .filter(|n| n.ends_with(".toml"))
            .collect();
        assert!(!names.is_empty(), "no graph specs in {dir}/");
        names.sort();
        specs.extend(names.into_iter().map(|n| format!("{dir}/{n}")));
    }
    let mut stems: Vec<String> = specs.iter().map(|s| stem(s)).collect();
    stems.sort();
    stems.dedup();
    assert_eq!(stems.len(), specs.len(), "two specs share a file stem, so a snapshot name");
    specs
}

fn with_request<R>(rel: &str, f: impl FnOnce(&GraphRequest<'_>) -> R) -> R {
    let root = workspace_root();
    let spec = root.join(rel);
    let text = std::fs::read_to_string(spec).expect("spec text");
    let read_file = |p: &str| std::fs::read_to_string(root.join(p));
    let req = GraphRequest {
        spec_path: rel,
        spec_text: &text,
        struct_name: None,
        root: "$CARGO_MANIFEST_DIR",
        read_file: &read_file,
    };
    f(&req)
}

fn stem(spec: &str) -> String {
    Path::new(spec).file_stem().unwrap().to_str().unwrap().to_string()
}

#[test]
fn generated_code_of_every_spec() {
    for spec in specs() {
        let tokens = with_request(&spec, generate)
            .unwrap_or_else(|errors| panic!("{} does not validate:\n{}", spec, errors.join("\n\n")));
        let file: syn::File = syn::parse2(tokens).expect("generated code parses as a Rust file");
        insta::assert_snapshot!(format!("code_{}", stem(&spec)), prettyplease::unparse(&file));
    }
}

#[test]
fn dependency_edges_of_every_spec() {
    for spec in specs() {
        let a = with_request(&spec, analyze)
            .unwrap_or_else(|errors| panic!("{} does not validate:\n{}", spec, errors.join("\n\n")));
        let node = |i: usize| a.ir.nodes[i].name.clone();
        let mut out = String::from("edges (transitively reduced):\n");
        for e in &a.edges {
            let causes: Vec<String> =
                e.causes.iter().map(|(b, h)| format!("{} {}", a.ir.buffer_label(*b), h.name())).collect();
            out += &format!("  {} -> {}  [{}]\n", node(e.from), node(e.to), causes.join(", "));
        }
        out += &format!("capture: {} side stream(s), {} event(s)\n", a.schedule.side_streams, a.schedule.events);
        for step in &a.schedule.steps {
            out += &match *step {
                Step::Record { event, stream } => format!("  record event {event} on stream {stream}\n"),
                Step::Wait { stream, event } => format!("  stream {stream} waits for event {event}\n"),
                Step::Launch { node: n, stream, pdl } => {
                    format!("  launch {} on stream {stream}{}\n", node(n), if pdl { " with PDL" } else { "" })
                }
            };
        }
        insta::assert_snapshot!(format!("edges_{}", stem(&spec)), out);
    }
}
