//! Must fail to compile: a node's kernel would access 4096 elements of a 16-element buffer (see `extent_out_of_bounds.toml`).

kgraph::graph!("tests/ui/graph/extent_out_of_bounds.toml");

fn main() {}
