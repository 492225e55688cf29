//! Compiles `kernels/*.cu` to cubins in `$OUT_DIR/kgraph` (see the `kgraph-build` crate).
fn main() {
    kgraph_build::compile_kernels();
}
