//! Must fail to compile: a length expression that does not parse (see `len_parse_error.toml`).

kgraph::graph!("tests/ui/graph/len_parse_error.toml");

fn main() {}
