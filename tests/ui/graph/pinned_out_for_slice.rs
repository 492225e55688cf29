//! Must fail to compile: a pinned_out buffer bound to `&mut [f32]` and `&[f32]` parameters (see `pinned_out_for_slice.toml`).

kgraph::graph!("tests/ui/graph/pinned_out_for_slice.toml");

fn main() {}
