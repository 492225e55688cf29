//! Compiles this crate's `kernels/*.cu` (the runtime tests' kernels) to cubins in
//! `$OUT_DIR/kgraph`, as any crate using kgraph does (see `kgraph-build`).
fn main() {
    kgraph_build::compile_kernels();
}
