//! Must fail to compile: a buffer `len` of 2^48 (see `len_too_large.toml`).

kgraph::graph!("tests/ui/graph/len_too_large.toml");

fn main() {}
