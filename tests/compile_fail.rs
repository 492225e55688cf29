//! `#[kernel]` / `#[kernels]` compile errors: each case in `tests/ui/kernel/` must fail with
//! exactly the checked-in `.stderr`. The cases' kernels are in `tests/ui/kernel/kernels/`,
//! compiled by this package's build script, so the cases are checked against what nvcc compiled
//! (`<stem>.kernels`, `<stem>.i`): `KGRAPH_RECORD_DIR` points trybuild's crate, which has no
//! build script, at this package's `$OUT_DIR/kgraph`.

/// This package's record folder, where its build script left the records.
const RECORD_DIR: &str = concat!(env!("OUT_DIR"), "/kgraph");

#[test]
fn kernel_compile_fail() {
    std::env::set_var("KGRAPH_KERNEL_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ui/kernel/kernels"));
    std::env::set_var("KGRAPH_RECORD_DIR", RECORD_DIR);
    let cases = trybuild::TestCases::new();
    if !cfg!(kgraph_corpus2) {
        cases.compile_fail("tests/ui/kernel/*.rs");
        return;
    }
    // With corpus2's sources present (tests/corpus2/README.md) the build has one more kernel
    // folder, which `missing_file`'s list of the places it looked names; every other case runs.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ui/kernel");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("tests/ui/kernel")
        .map(|entry| entry.expect("tests/ui/kernel entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".rs") && name != "missing_file.rs")
        .collect();
    names.sort();
    for name in names {
        cases.compile_fail(format!("tests/ui/kernel/{name}"));
    }
}

/// `graph!` compile errors: each spec in `tests/ui/graph/` breaks one rule (two or more for
/// `errors_reported_together`), and every message names the TOML file, line and column. The
/// specs use the declarations in `tests/gpu/graph/kernels.rs`; trybuild builds the cases in a
/// crate of its own, so `KGRAPH_MANIFEST_DIR` points `graph!` back at this crate's root.
#[test]
fn graph_compile_fail() {
    std::env::set_var("KGRAPH_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"));
    std::env::set_var("KGRAPH_RECORD_DIR", RECORD_DIR);
    trybuild::TestCases::new().compile_fail("tests/ui/graph/*.rs");
}

/// Soundness holes closed at compile time (docs/safety.md): each case in `tests/ui/safety/`
/// would be undefined behaviour if it compiled (a graph replaying freed buffers, a pinned
/// pointer outliving its buffer, an unordered second stream, a host view racing a kernel, an
/// untimed replay behind a struct's back, an NCCL group's buffer freed before the group's end,
/// unverified PDL from disk modules, an invented condition handle).
/// The run-time half (waits, foreign-stream errors) is `runtime/gpu-tests/tests/gpu/safety.rs`.
#[test]
fn safety_compile_fail() {
    trybuild::TestCases::new().compile_fail("tests/ui/safety/*.rs");
}
