//! Compiles the reference model's `kernels/*.cu`, the GPU suite's `tests/kernels/*.cu`, the
//! benches' `examples/bench/kernels/*.cu`, the MLP example's `examples/mlp/kernels/*.cu` and the
//! `#[kernel]` compile-fail cases' `tests/ui/kernel/kernels/*.cu` to cubins in `$OUT_DIR/kgraph`
//! (see `kgraph-build`), and lowers the `resident = true` specs of `graphs/` and `tests/graphs/` to
//! resident kernels; the trybuild cases are checked against these records
//! (`tests/compile_fail.rs`).
//! Where `tests/corpus2/src/` holds the corpus2 sources (third-party kernels kept out of git:
//! `tests/corpus2/README.md`), it compiles them too and sets `cfg(kgraph_corpus2)`, which turns
//! on the `corpus2` test target; without them (CI, a fresh clone) nothing changes.
//! This package is the workspace root, not a dependency of anything: a crate that depends on
//! `kgraph` runs its own build script only.
use std::path::Path;

/// The ignored folder of corpus2's copied sources, relative to the package root.
const CORPUS2_SRC: &str = "tests/corpus2/src";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kgraph_corpus2)");
    // The parent folder is in git, so it always exists: watching it notices the sources being
    // added or removed (a missing path would make cargo rerun this script on every build).
    println!("cargo::rerun-if-changed=tests/corpus2");
    let mut build = kgraph_build::KernelBuild::new()
        .add_kernel_dir("tests/kernels")
        .add_kernel_dir("examples/bench/kernels")
        .add_kernel_dir("examples/mlp/kernels")
        .add_kernel_dir("tests/ui/kernel/kernels")
        .add_graph_dir("tests/graphs");
    if has_cu_files(Path::new(CORPUS2_SRC)) {
        build = build.add_kernel_dir(CORPUS2_SRC);
        println!("cargo::rustc-cfg=kgraph_corpus2");
    }
    build.run_or_exit();
}

/// Whether `dir` exists and holds at least one `.cu` file.
fn has_cu_files(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .is_ok_and(|entries| entries.flatten().any(|e| e.path().extension().is_some_and(|ext| ext == "cu")))
}
