//! Must fail to compile: an unknown kernel name (with a suggestion) (see `unknown_kernel.toml`).

kgraph::graph!("tests/ui/graph/unknown_kernel.toml");

fn main() {}
