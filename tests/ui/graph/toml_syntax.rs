//! Must fail to compile: a TOML syntax error (see `toml_syntax.toml`).

kgraph::graph!("tests/ui/graph/toml_syntax.toml");

fn main() {}
