//! Must fail to compile: a scratch buffer read by a node before the node that writes it (see `read_before_write.toml`).

kgraph::graph!("tests/ui/graph/read_before_write.toml");

fn main() {}
