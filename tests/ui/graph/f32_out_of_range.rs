//! Must fail to compile: an f32 default out of the range of f32 (see `f32_out_of_range.toml`).

kgraph::graph!("tests/ui/graph/f32_out_of_range.toml");

fn main() {}
