//! Must fail to compile: `pdl` set to an integer and to a string (see `pdl_not_bool.toml`).

kgraph::graph!("tests/ui/graph/pdl_not_bool.toml");

fn main() {}
