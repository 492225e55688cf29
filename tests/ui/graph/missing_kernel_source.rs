//! Must fail to compile: a [kernels] source file that does not exist (see `missing_kernel_source.toml`).

kgraph::graph!("tests/ui/graph/missing_kernel_source.toml");

fn main() {}
