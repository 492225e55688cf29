//! Must fail to compile: two nodes of one kernel without distinct names (see `duplicate_node_name.toml`).

kgraph::graph!("tests/ui/graph/duplicate_node_name.toml");

fn main() {}
