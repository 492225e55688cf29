//! Must fail to compile: a length expression over an unknown dim (see `unknown_dim_in_len.toml`).

kgraph::graph!("tests/ui/graph/unknown_dim_in_len.toml");

fn main() {}
