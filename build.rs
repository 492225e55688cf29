//! Compiles the reference model's `kernels/*.cu`, the GPU suite's `tests/kernels/*.cu`, the
//! benches' `examples/bench/kernels/*.cu` and the `#[kernel]` compile-fail cases'
//! `tests/ui/kernel/kernels/*.cu` to cubins in `$OUT_DIR/kgraph` (see `kgraph-build`); the
//! trybuild cases are checked against these records (`tests/compile_fail.rs`).
//! This package is the workspace root, not a dependency of anything: a crate that depends on
//! `kgraph` runs its own build script only.
fn main() {
    kgraph_build::KernelBuild::new()
        .add_kernel_dir("tests/kernels")
        .add_kernel_dir("examples/bench/kernels")
        .add_kernel_dir("tests/ui/kernel/kernels")
        .run_or_exit();
}
