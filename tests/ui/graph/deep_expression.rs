//! Must fail to compile: a grid expression nested deeper than 128 levels (see `deep_expression.toml`).

kgraph::graph!("tests/ui/graph/deep_expression.toml");

fn main() {}
