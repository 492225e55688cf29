//! Must fail to compile: several unrelated errors, all reported by one expansion (see `errors_reported_together.toml`).

kgraph::graph!("tests/ui/graph/errors_reported_together.toml");

fn main() {}
