//! Snapshots of what `graph!` generates for every spec in the workspace's `graphs/` folder
//! (formatted with prettyplease), and of each spec's derived dependency edges and capture
//! schedule (PDL launches marked). New specs are picked up automatically; review changes with `cargo insta review`.

use std::path::{Path, PathBuf};

use kgraph_codegen::graph::{analyze, dataflow::Step, generate, GraphRequest};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

fn specs() -> Vec<PathBuf> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(workspace_root().join("graphs"))
        .expect("graphs/ folder")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    specs.sort();
    assert!(!specs.is_empty(), "no graph specs in graphs/");
    specs
}

fn with_request<R>(spec: &Path, f: impl FnOnce(&GraphRequest<'_>) -> R) -> R {
    let root = workspace_root();
    let rel = format!("graphs/{}", spec.file_name().unwrap().to_str().unwrap());
    let text = std::fs::read_to_string(spec).expect("spec text");
    let read_file = |p: &str| std::fs::read_to_string(root.join(p));
    let req = GraphRequest {
        spec_path: &rel,
        spec_text: &text,
        struct_name: None,
        root: "$CARGO_MANIFEST_DIR",
        read_file: &read_file,
    };
    f(&req)
}

fn stem(spec: &Path) -> String {
    spec.file_stem().unwrap().to_str().unwrap().to_string()
}

#[test]
fn generated_code_of_every_spec() {
    for spec in specs() {
        let tokens = with_request(&spec, generate)
            .unwrap_or_else(|errors| panic!("{} does not validate:\n{}", spec.display(), errors.join("\n\n")));
        let file: syn::File = syn::parse2(tokens).expect("generated code parses as a Rust file");
        insta::assert_snapshot!(format!("code_{}", stem(&spec)), prettyplease::unparse(&file));
    }
}

#[test]
fn dependency_edges_of_every_spec() {
    for spec in specs() {
        let a = with_request(&spec, analyze)
            .unwrap_or_else(|errors| panic!("{} does not validate:\n{}", spec.display(), errors.join("\n\n")));
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
