//! Must fail to compile: a `pdl = true` node whose kernel is not proven to wait on its grid
//! dependency (see `pdl_without_wait.toml`).

kgraph::graph!("tests/ui/graph/pdl_without_wait.toml");

fn main() {}
