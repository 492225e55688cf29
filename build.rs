//! Compiles the reference model's `kernels/*.cu`, the GPU suite's `tests/kernels/*.cu` and the
//! benches' `examples/bench/kernels/*.cu` to cubins in `$OUT_DIR/kgraph` (see `kgraph-build`).
//! This package is the workspace root, not a dependency of anything: a crate that depends on
//! `kgraph` runs its own build script only.
fn main() {
    kgraph_build::KernelBuild::new()
        .add_kernel_dir("tests/kernels")
        .add_kernel_dir("examples/bench/kernels")
        .run_or_exit();
}
