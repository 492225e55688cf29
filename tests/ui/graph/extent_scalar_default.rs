//! Must fail to compile: a scalar's default breaks an extent it feeds (see `extent_scalar_default.toml`).

kgraph::graph!("tests/ui/graph/extent_scalar_default.toml");

fn main() {}
