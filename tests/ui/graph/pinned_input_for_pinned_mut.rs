//! Must fail to compile: `pinned`, `slot` and `output` buffers bound to a PinnedMut<f32> parameter (see `pinned_input_for_pinned_mut.toml`).

kgraph::graph!("tests/ui/graph/pinned_input_for_pinned_mut.toml");

fn main() {}
