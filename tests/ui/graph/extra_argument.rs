//! Must fail to compile: an argument the kernel does not have (see `extra_argument.toml`).

kgraph::graph!("tests/ui/graph/extra_argument.toml");

fn main() {}
