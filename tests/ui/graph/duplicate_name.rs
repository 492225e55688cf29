//! Must fail to compile: a buffer with the same name as a dim (see `duplicate_name.toml`).

kgraph::graph!("tests/ui/graph/duplicate_name.toml");

fn main() {}
