//! Must fail to compile: a slot with a length other than 1 (see `slot_len.toml`).

kgraph::graph!("tests/ui/graph/slot_len.toml");

fn main() {}
