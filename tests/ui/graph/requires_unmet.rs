//! Must fail to compile: a node launches `rq_tile_sum`, which requires `block.x == 256`, with
//! blocks of 128 (see `requires_unmet.toml`).

kgraph::graph!("tests/ui/graph/requires_unmet.toml");

fn main() {}
