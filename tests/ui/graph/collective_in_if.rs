//! Must fail to compile: a collective in an `[[if]]` body (see `collective_in_if.toml`).

kgraph::graph!("tests/ui/graph/collective_in_if.toml");

fn main() {}
