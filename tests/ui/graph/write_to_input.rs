//! Must fail to compile: a kernel writing (&mut) an input buffer (see `write_to_input.toml`).

kgraph::graph!("tests/ui/graph/write_to_input.toml");

fn main() {}
