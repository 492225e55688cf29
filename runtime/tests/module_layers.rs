//! The runtime's modules are layered like cudarc's sys -> result -> safe: a module only uses
//! modules below it, so none reaches itself through its imports, and `impl Device` lives in one
//! file. Read from the sources, so a new import that closes a cycle fails here, on any machine.

use std::collections::BTreeMap;
use std::path::Path;

/// Module -> the crate modules its code names (`crate::x`), from `src/*.rs` less `lib.rs`.
fn module_uses() -> BTreeMap<String, Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|e| e == "rs") && stem != "lib" {
            files.insert(stem, std::fs::read_to_string(&path).unwrap());
        }
    }
    let modules: Vec<String> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(module, text)| {
            let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
            let mut uses: Vec<String> =
                modules.iter().filter(|m| *m != module).filter(|m| named_in(&code, m)).cloned().collect();
            uses.sort();
            (module.clone(), uses)
        })
        .collect()
}

/// Whether `code` names `crate::module`, alone or in a `crate::{..}` group.
fn named_in(code: &str, module: &str) -> bool {
    let word_at = |text: &str, at: usize| {
        text[at..].starts_with(module)
            && !text[at + module.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    };
    code.match_indices("crate::").any(|(i, _)| {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            group.split(',').any(|part| word_at(part.trim(), 0))
        } else {
            word_at(rest, 0)
        }
    })
}

/// A cycle through `graph`'s edges, if any, as the modules along it.
fn find_cycle(graph: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.iter().any(|n| n == node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.push(node.to_string());
        None
    }
    let mut done = Vec::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn module_imports_are_acyclic() {
    let uses = module_uses();
    for (module, deps) in &uses {
        println!("{module} -> {}", if deps.is_empty() { "(none)".to_string() } else { deps.join(", ") });
    }
    assert!(uses.contains_key("device") && uses["device"].contains(&"transfer".to_string()), "{uses:?}");
    if let Some(cycle) = find_cycle(&uses) {
        panic!("module cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_cycle_finder_finds_cycles() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (from, to) in edges {
            g.entry(from.to_string()).or_default().push(to.to_string());
            g.entry(to.to_string()).or_default();
        }
        g
    };
    let cycle = find_cycle(&graph(&[("device", "transfer"), ("transfer", "mapped"), ("mapped", "device")]));
    assert_eq!(cycle.map(|c| c.len()), Some(4));
    assert_eq!(find_cycle(&graph(&[("a", "b"), ("a", "c"), ("b", "c")])), None);
    assert!(named_in("use crate::{error::Error, pod};", "pod"));
    assert!(!named_in("use crate::pinned::X;", "pin"));
}

#[test]
fn impl_device_lives_in_one_file() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut holders = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        // Source files only (`src/control/` holds the control kernels' .cu and .ptx).
        if !path.extension().is_some_and(|e| e == "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let opens_impl =
            |l: &str| l.trim_start().strip_prefix("impl Device").is_some_and(|r| r.starts_with([' ', '{']));
        if text.lines().any(opens_impl) {
            holders.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert_eq!(holders, ["device.rs"]);
}
