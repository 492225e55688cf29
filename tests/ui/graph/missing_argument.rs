//! Must fail to compile: a kernel parameter with no argument (see `missing_argument.toml`).

kgraph::graph!("tests/ui/graph/missing_argument.toml");

fn main() {}
