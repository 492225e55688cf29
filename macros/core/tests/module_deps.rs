//! The crate's modules depend on each other one way only: every `use` and every path through
//! `crate::`, `super::`, `self::` or a child module, resolved to the module it names, must form
//! an acyclic graph (a parent declaring its children with `mod` is not a dependency). A cycle
//! fails with the modules on it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Module path (`crate::graph::check`) → its file.
fn modules() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("src folder") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files
        .into_iter()
        .map(|file| {
            let rel = file.strip_prefix(&src).unwrap().with_extension("");
            let mut segs: Vec<String> = rel.iter().map(|s| s.to_str().unwrap().to_string()).collect();
            if matches!(segs.last().map(String::as_str), Some("lib" | "mod")) {
                segs.pop();
            }
            (std::iter::once("crate".to_string()).chain(segs).collect::<Vec<_>>().join("::"), file)
        })
        .collect()
}

/// Every path a file mentions, as segments (use trees flattened).
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

fn flatten(prefix: &[String], tree: &syn::UseTree, out: &mut Vec<Vec<String>>) {
    let with = |seg: &syn::Ident| [prefix, &[seg.to_string()]].concat();
    match tree {
        syn::UseTree::Path(p) => flatten(&with(&p.ident), &p.tree, out),
        syn::UseTree::Name(n) => out.push(with(&n.ident)),
        syn::UseTree::Rename(r) => out.push(with(&r.ident)),
        syn::UseTree::Glob(_) => out.push(prefix.to_vec()),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| flatten(prefix, t, out)),
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        flatten(&[], &u.tree, &mut self.0);
    }

    // `pub(crate)` and `pub(super)` name no dependency.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            self.0.push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, p);
    }
}

/// The module `segs` (a path written in module `from`) lands in, if it names one of ours.
fn resolve(from: &str, segs: &[String], modules: &BTreeMap<String, PathBuf>) -> Option<String> {
    let mut abs: Vec<String> = from.split("::").map(str::to_string).collect();
    let mut rest = segs;
    match segs.first().map(String::as_str) {
        Some("crate") => abs = vec!["crate".to_string()],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                abs.pop();
                rest = &rest[1..];
            }
            return resolve_abs(abs.into_iter().chain(rest.iter().cloned()).collect(), modules);
        }
        Some("self") => {}
        // Relative: only a child module of `from` (`fields::buffer_field` in `emit/mod.rs`).
        Some(first) if modules.contains_key(&format!("{from}::{first}")) => {
            return resolve_abs(abs.into_iter().chain(segs.iter().cloned()).collect(), modules);
        }
        _ => return None,
    }
    resolve_abs(abs.into_iter().chain(rest[1..].iter().cloned()).collect(), modules)
}

/// The longest prefix of `abs` that is one of our modules.
fn resolve_abs(abs: Vec<String>, modules: &BTreeMap<String, PathBuf>) -> Option<String> {
    let abs: Vec<String> = abs.into_iter().filter(|s| s != "self").collect();
    (1..=abs.len()).rev().map(|k| abs[..k].join("::")).find(|m| modules.contains_key(m))
}

fn dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let mut deps = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).expect("source file");
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut paths = Paths::default();
        paths.visit_file(&ast);
        let used: BTreeSet<String> = paths
            .0
            .iter()
            .filter_map(|segs| resolve(module, segs, &modules))
            .filter(|target| target != module)
            .collect();
        deps.insert(module.clone(), used);
    }
    deps
}

/// A cycle through `u`, if the depth-first search from it finds one.
fn find_cycle(
    u: &str,
    deps: &BTreeMap<String, BTreeSet<String>>,
    state: &mut BTreeMap<String, bool>,
    stack: &mut Vec<String>,
) -> Option<Vec<String>> {
    state.insert(u.to_string(), false);
    stack.push(u.to_string());
    for v in &deps[u] {
        match state.get(v) {
            Some(false) => {
                let start = stack.iter().position(|m| m == v).unwrap();
                return Some([&stack[start..], std::slice::from_ref(v)].concat());
            }
            Some(true) => {}
            None => {
                if let Some(cycle) = find_cycle(v, deps, state, stack) {
                    return Some(cycle);
                }
            }
        }
    }
    stack.pop();
    state.insert(u.to_string(), true);
    None
}

#[test]
fn module_dependencies_are_acyclic() {
    let deps = dependencies();
    let mut state = BTreeMap::new();
    for module in deps.keys() {
        if !state.contains_key(module) {
            if let Some(cycle) = find_cycle(module, &deps, &mut state, &mut Vec::new()) {
                panic!("module cycle: {}", cycle.join(" -> "));
            }
        }
    }
}

#[test]
fn graph_checks_never_depend_on_emitting_and_the_front_end_on_nothing_later() {
    let deps = dependencies();
    let uses =
        |module: &str, other: &str| deps[module].iter().any(|d| d == other || d.starts_with(&format!("{other}::")));
    for (module, _) in deps.iter().filter(|(m, _)| m.starts_with("crate::graph::check")) {
        assert!(!uses(module, "crate::graph::emit"), "{module} uses the emitter");
    }
    // The front end uses only itself and the error collector, which uses nothing of the crate.
    for (module, used) in deps.iter().filter(|(m, _)| m.starts_with("crate::syntax")) {
        for other in used {
            let allowed = other.starts_with("crate::syntax") || other == "crate::diagnostics";
            assert!(allowed, "{module} uses {other}: the front end may use only `syntax` and `diagnostics`");
        }
    }
    assert!(deps["crate::diagnostics"].is_empty(), "diagnostics uses {:?}", deps["crate::diagnostics"]);
    assert!(!uses("crate::kernel::check", "crate::kernel::emit"), "kernel checks use the emitter");
    assert!(deps.keys().any(|m| m == "crate::graph::check::bind"), "the module list was read: {:?}", deps.keys());
}
