//! Must fail to compile: a misspelt key in a buffer and in a node (see `unknown_key.toml`).

kgraph::graph!("tests/ui/graph/unknown_key.toml");

fn main() {}
