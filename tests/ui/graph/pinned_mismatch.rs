//! Must fail to compile: device memory for a Pinned<f32> parameter, pinned memory for a &[f32] one (see `pinned_mismatch.toml`).

kgraph::graph!("tests/ui/graph/pinned_mismatch.toml");

fn main() {}
