//! Must fail to compile: bad `[[include]]` bindings (see `include_binding.toml`).

kgraph::graph!("tests/ui/graph/include_binding.toml");

fn main() {}
