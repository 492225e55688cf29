//! Must fail to compile: an argument naming an unknown buffer (see `unknown_buffer.toml`).

kgraph::graph!("tests/ui/graph/unknown_buffer.toml");

fn main() {}
