//! Must fail to compile: a broken spec included twice, its one error reported once (see
//! `include_error_once.toml`).

kgraph::graph!("tests/ui/graph/include_error_once.toml");

fn main() {}
