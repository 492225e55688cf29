//! Must fail to compile: a value parameter bound to an unknown scalar (see `unknown_scalar.toml`).

kgraph::graph!("tests/ui/graph/unknown_scalar.toml");

fn main() {}
