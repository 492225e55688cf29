//! Must fail to compile: a buffer no node uses, and an unused scalar (see `unused_buffer.toml`).

kgraph::graph!("tests/ui/graph/unused_buffer.toml");

fn main() {}
