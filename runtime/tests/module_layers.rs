//! The runtime's layers, declared once ([`LAYERS`]) and checked against the sources: every
//! top-level module or folder of `src/` uses (through `use crate::...` and `super::` paths)
//! only the units its row allows, each of them listed before it (so there is no cycle), and
//! every allowed use is a real one (so the table stays exact). Only `driver/` calls the CUDA
//! driver; docs/architecture.md's runtime table is rendered from the same rows and the tree.
//! Read from the sources, so a new import that breaks a layer fails here, on any machine.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One unit of `src/`: a root module file (`error.rs`) or a folder (`memory/`).
struct Layer {
    unit: &'static str,
    what: &'static str,
    uses: &'static [&'static str],
}

/// Bottom to top: a unit may use only units above it in this list.
const LAYERS: &[Layer] = &[
    Layer {
        unit: "driver",
        what: "every CUDA driver call, a thin `unsafe fn` with a `# Safety` section each",
        uses: &[],
    },
    Layer { unit: "nvtx", what: "NVTX ranges named after graph nodes (feature `nvtx`)", uses: &[] },
    Layer { unit: "error", what: "`Error` and its nested enums, `Result`; whether libcuda loads", uses: &["driver"] },
    Layer {
        unit: "context",
        what: "`Context`, `Stream`: cudarc's, with event tracking off",
        uses: &["driver", "error"],
    },
    Layer {
        unit: "capture_guard",
        what: "refuses stream work inside a capture kgraph did not begin",
        uses: &["driver", "error"],
    },
    Layer {
        unit: "launch",
        what: "modules loaded once, argument traits, pinned pointers, launch checks, `launch_ex`",
        uses: &["capture_guard", "context", "driver", "error"],
    },
    Layer {
        unit: "memory",
        what: "`Pod`, buffers and views, mapped pinned memory, transfers, slot bus, `Device`, SM splits",
        uses: &["context", "driver", "error", "launch"],
    },
    Layer {
        unit: "graph",
        what: "capture and replay, builder, updates, control kernels, `issue_kernel`, profile, tune",
        uses: &["capture_guard", "context", "driver", "error", "launch"],
    },
    Layer {
        unit: "resident",
        what: "resident kernels (doorbell, submit / wait / stop; one block or a cooperative grid), the done-word wait of replays",
        uses: &["context", "driver", "error", "graph", "launch", "memory"],
    },
    Layer {
        unit: "nccl",
        what: "NCCL's C API (`sys`), bootstrap, communicator, groups, capture (feature `nccl`)",
        uses: &["capture_guard", "context", "driver", "error", "graph", "launch", "memory"],
    },
    Layer {
        unit: "gemm",
        what: "cuBLAS's C API (`sys`), row-major `Gemm`s, the `Blas` handle and its captures (feature `gemm`)",
        uses: &["capture_guard", "context", "error", "graph", "launch", "memory"],
    },
];

/// The only places that call C functions: the driver layer, NCCL's and cuBLAS's C APIs.
const FFI_LAYERS: [&str; 3] = ["driver/", "nccl/sys", "gemm/sys"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as paths relative to `src/` with `/` separators, sorted.
fn rust_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(src()).unwrap();
            out.push(
                rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/"),
            );
        }
    }
    out.sort();
    out
}

/// The unit a source file belongs to (`memory/device.rs` -> `memory`), `None` for `lib.rs`.
fn unit_of(file: &str) -> Option<&str> {
    match file.split_once('/') {
        Some((folder, _)) => Some(folder),
        None => file.strip_suffix(".rs").filter(|stem| *stem != "lib"),
    }
}

/// The text of `code` without `//` comments (doc links name modules too, but are not uses).
fn code_of(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The first path segments that `code` names after `crate::`, alone or in a `crate::{..}` group.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let first = |s: &str| s.trim().split("::").next().unwrap_or("").trim().to_string();
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with('$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(first).filter(|s| !s.is_empty()));
        } else {
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            out.insert(rest[..end].to_string());
        }
    }
    out
}

/// Whether `file` has a `super::` path at file level (column 0, as rustfmt writes a file's
/// imports) that leaves its unit: `super` of a root file or of a folder's `mod.rs` is the
/// crate root, which re-exports everything and so would hide the real layer. An indented
/// `super::` sits in an inline module (`mod tests`) and names its own file.
fn super_leaves_unit(file: &str, code: &str) -> bool {
    let to_root = !file.contains('/') || file.matches('/').count() == 1 && file.ends_with("/mod.rs");
    to_root && code.lines().any(|l| l.starts_with("use super::") || l.starts_with("pub use super::"))
}

/// Unit -> the other units its code names; errors for paths that bypass the table.
fn unit_uses() -> (BTreeMap<String, BTreeSet<String>>, Vec<String>) {
    let units: BTreeSet<&str> = LAYERS.iter().map(|l| l.unit).collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut bypasses = Vec::new();
    for file in rust_files(&src()) {
        let Some(unit) = unit_of(&file) else { continue };
        let code = code_of(&std::fs::read_to_string(src().join(&file)).unwrap());
        let entry = uses.entry(unit.to_string()).or_default();
        for path in crate_paths(&code) {
            if units.contains(path.as_str()) {
                if path != unit {
                    entry.insert(path);
                }
            } else {
                bypasses.push(format!("{file}: `crate::{path}` is not a unit: name the module that defines it"));
            }
        }
        if super_leaves_unit(&file, &code) {
            bypasses.push(format!("{file}: a file-level `super::` path reaches the crate root"));
        }
    }
    (uses, bypasses)
}

#[test]
fn every_unit_uses_only_what_its_layer_allows() {
    let (uses, bypasses) = unit_uses();
    assert!(bypasses.is_empty(), "{}", bypasses.join("\n"));
    let declared: BTreeSet<&str> = LAYERS.iter().map(|l| l.unit).collect();
    let found: BTreeSet<&str> = uses.keys().map(String::as_str).collect();
    assert_eq!(declared, found, "LAYERS must list every root module and folder of src/ (and no other)");
    assert!(uses["memory"].contains("launch") && uses["nccl"].contains("graph"), "{uses:?}");
    let mut errors = Vec::new();
    for (row, layer) in LAYERS.iter().enumerate() {
        let below: BTreeSet<&str> = LAYERS[..row].iter().map(|l| l.unit).collect();
        for allowed in layer.uses {
            if !below.contains(allowed) {
                errors.push(format!("{}: allowed `{allowed}` is not listed before it (layers point down)", layer.unit));
            }
        }
        let allowed: BTreeSet<&str> = layer.uses.iter().copied().collect();
        let real: BTreeSet<&str> = uses[layer.unit].iter().map(String::as_str).collect();
        for extra in real.difference(&allowed) {
            errors.push(format!("{} uses `{extra}`, which its layer does not allow", layer.unit));
        }
        for unused in allowed.difference(&real) {
            errors.push(format!("{} may use `{unused}` but does not: drop it from LAYERS", layer.unit));
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// `name::` at `at` in `code` is a path's start (not the tail of a longer name or path).
fn path_starts(code: &str, at: usize) -> bool {
    !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
}

/// The driver calls in `code`: `sys::cu*(` functions (the driver's types are `CU*`/`cuuint*`),
/// the library probes, and cudarc's `result` module (which only wraps driver calls).
fn driver_calls(code: &str) -> Vec<String> {
    let mut calls = Vec::new();
    for (at, _) in code.match_indices("sys::") {
        let name: String = code[at + 5..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let function = name.starts_with("cu") && name[2..].starts_with(|c: char| c.is_ascii_uppercase());
        if function || name == "is_culib_present" {
            calls.push(format!("sys::{name}"));
        }
    }
    for (at, _) in code.match_indices("result::") {
        if path_starts(code, at) || code[..at].ends_with("driver::") {
            calls.push("cudarc's result::".to_string());
        }
    }
    for (at, _) in code.match_indices("result,") {
        if code[..at].trim_end().ends_with('{') {
            calls.push("an import of cudarc's result".to_string());
        }
    }
    calls
}

#[test]
fn only_the_driver_layer_calls_the_driver() {
    let mut outside = Vec::new();
    let mut inside = 0;
    for file in rust_files(&src()) {
        let code = code_of(&std::fs::read_to_string(src().join(&file)).unwrap());
        let calls = driver_calls(&code);
        if FFI_LAYERS.iter().any(|layer| file.starts_with(layer)) {
            inside += calls.len();
        } else {
            outside.extend(calls.into_iter().map(|c| format!("{file}: {c}")));
        }
    }
    assert!(outside.is_empty(), "driver calls outside driver/ (add a thin fn there):\n{}", outside.join("\n"));
    assert!(inside >= 30, "the scan finds the driver layer's own calls ({inside})");
}

/// Every `unsafe fn` of the FFI layers documents its contract.
#[test]
fn every_driver_fn_has_a_safety_section() {
    let mut missing = Vec::new();
    for file in rust_files(&src()).into_iter().filter(|f| FFI_LAYERS.iter().any(|l| f.starts_with(l))) {
        let text = std::fs::read_to_string(src().join(&file)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("pub(crate) unsafe fn ") else { continue };
            let docs = lines[..i]
                .iter()
                .rev()
                .skip_while(|l| l.trim_start().starts_with("#["))
                .take_while(|l| l.trim_start().starts_with("///"));
            if !docs.into_iter().any(|l| l.trim_start() == "/// # Safety") {
                missing.push(format!("{file}:{}: {}", i + 1, rest.split('(').next().unwrap_or(rest)));
            }
        }
    }
    assert!(missing.is_empty(), "driver fns without `# Safety`:\n{}", missing.join("\n"));
}

#[test]
fn the_scanners_find_what_they_look_for() {
    let paths = crate_paths("use crate::{error::Error, memory::pod};\nfn f() { crate::launch::x(); $crate::y }");
    assert_eq!(paths.into_iter().collect::<Vec<_>>(), ["error", "launch", "memory"]);
    assert_eq!(unit_of("memory/device.rs"), Some("memory"));
    assert_eq!(unit_of("error.rs"), Some("error"));
    assert_eq!(unit_of("lib.rs"), None);
    assert!(super_leaves_unit("memory/mod.rs", "use super::context::Stream;"));
    assert!(!super_leaves_unit("nccl/sys/calls.rs", "use super::Api;"));
    assert!(!super_leaves_unit("error.rs", "mod tests {\n    use super::*;\n}"));
    let code = "unsafe { sys::cuGraphLaunch(g, s) }; let x: sys::CUgraph; let i: sys::cuuint64_t;";
    assert_eq!(driver_calls(code), ["sys::cuGraphLaunch"]);
    assert_eq!(driver_calls("use cudarc::driver::{result, sys};").len(), 1);
    assert_eq!(driver_calls("unsafe { cudarc::driver::result::ctx::synchronize() }").len(), 1);
    assert!(driver_calls("fn f() -> std::result::Result<(), E>; x == CUresult::CUDA_SUCCESS").is_empty());
    assert_eq!(code_of("use crate::a; // crate::b"), "use crate::a; ");
}

#[test]
fn impl_device_lives_in_one_file() {
    let opens_impl = |l: &str| l.trim_start().strip_prefix("impl Device").is_some_and(|r| r.starts_with([' ', '{']));
    let holders: Vec<String> = rust_files(&src())
        .into_iter()
        .filter(|file| std::fs::read_to_string(src().join(file)).unwrap().lines().any(opens_impl))
        .collect();
    assert_eq!(holders, ["memory/device.rs"]);
}

/// The runtime table of docs/architecture.md, between these markers, as the tree and
/// [`LAYERS`] say it is.
const DOC_BEGIN: &str = "<!-- runtime layers: rendered from runtime/tests/module_layers.rs (LAYERS) and src/ -->";
const DOC_END: &str = "<!-- end of runtime layers -->";

fn rendered_table() -> String {
    let files = rust_files(&src());
    let mut out = String::from("| unit (bottom first) | what | files | may use |\n| --- | --- | --- | --- |\n");
    for layer in LAYERS {
        let mine: Vec<String> = files
            .iter()
            .filter(|f| unit_of(f) == Some(layer.unit))
            .map(|f| format!("`{}`", f.split_once('/').map_or(f.as_str(), |(_, rest)| rest)))
            .collect();
        let name = if files.iter().any(|f| f == &format!("{}.rs", layer.unit)) {
            format!("`{}.rs`", layer.unit)
        } else {
            format!("`{}/`", layer.unit)
        };
        let files = if name.ends_with(".rs`") { String::new() } else { mine.join(", ") };
        let uses = if layer.uses.is_empty() { "—".to_string() } else { layer.uses.join(", ") };
        out.push_str(&format!("| {name} | {} | {files} | {uses} |\n", layer.what));
    }
    out
}

#[test]
fn architecture_doc_shows_the_tree_and_the_layers() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let expected = rendered_table();
    let (Some(begin), Some(end)) = (doc.find(DOC_BEGIN), doc.find(DOC_END)) else {
        panic!("docs/architecture.md lacks the markers; put this between\n{DOC_BEGIN}\n{expected}{DOC_END}");
    };
    let found = doc[begin + DOC_BEGIN.len()..end].trim_start_matches('\n');
    if found != expected {
        if std::env::var_os("KGRAPH_BLESS_DOCS").is_some() {
            let updated = format!("{}{DOC_BEGIN}\n{expected}{}", &doc[..begin], &doc[end..]);
            std::fs::write(&doc_path, updated).unwrap();
            return;
        }
        panic!(
            "docs/architecture.md's runtime table disagrees with the tree or LAYERS; rerun with \
             KGRAPH_BLESS_DOCS=1 to rewrite it. Expected:\n{expected}"
        );
    }
}
