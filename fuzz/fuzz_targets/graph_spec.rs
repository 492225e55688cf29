//! Fuzzes the graph-spec reader and validator: any UTF-8 text is a spec (`g.toml`). It must
//! give a model, whose generated code parses as Rust, or errors that each start with
//! `g.toml:line:col: ` inside the text and quote that line. A panic is a finding.

#![no_main]

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use kgraph_codegen::graph::{generate, GraphRequest};
use libfuzzer_sys::fuzz_target;

thread_local! {
    /// Kernel declaration files, read from the workspace once each.
    static FILES: RefCell<HashMap<String, Option<String>>> = RefCell::new(HashMap::new());
}

/// `[kernels] source` files, relative to the workspace root (never outside it).
fn read_file(path: &str) -> std::io::Result<String> {
    let inside = !path.is_empty() && !path.starts_with(['/', '\\']) && !path.contains("..");
    let text = FILES.with(|files| {
        files
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| {
                let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
                inside.then(|| std::fs::read_to_string(root.join(path)).ok()).flatten()
            })
            .clone()
    });
    text.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
}

fn check_position(text: &str, error: &str) {
    let (pos, rest) = error.split_once(": ").unwrap_or_else(|| panic!("no position in {error:?}"));
    let parts: Vec<&str> = pos.split(':').collect();
    let [file, line, col] = parts[..] else { panic!("no `file:line:col` in {error:?}") };
    let (line, col): (usize, usize) = (line.parse().expect("line"), col.parse().expect("column"));
    assert_eq!(file, "g.toml", "{error:?}");
    let quoted = text.split('\n').nth(line - 1).unwrap_or_else(|| panic!("line {line} past the end: {error:?}"));
    assert!(col >= 1 && col <= quoted.chars().count() + 1, "column {col} outside line {line}: {error:?}");
    assert!(rest.contains(&format!(" {line} | ")), "line {line} not quoted: {error:?}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let req = GraphRequest { spec_path: "g.toml", spec_text: text, struct_name: None, root: "", read_file: &read_file };
    match generate(&req) {
        Ok(tokens) => {
            if let Err(e) = syn::parse2::<syn::File>(tokens) {
                panic!("generated code does not parse: {e}");
            }
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "rejected without an error");
            for e in &errors {
                check_position(text, e);
            }
        }
    }
});
