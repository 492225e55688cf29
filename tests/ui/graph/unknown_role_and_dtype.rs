//! Must fail to compile: an unknown role and an unknown dtype (see `unknown_role_and_dtype.toml`).

kgraph::graph!("tests/ui/graph/unknown_role_and_dtype.toml");

fn main() {}
