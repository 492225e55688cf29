//! Must fail to compile: a kernel writing (&mut) a parameter buffer (see `write_to_parameter.toml`).

kgraph::graph!("tests/ui/graph/write_to_parameter.toml");

fn main() {}
