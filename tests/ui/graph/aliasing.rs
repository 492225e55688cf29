//! Must fail to compile: the same buffer passed to a &[f32] and a &mut [f32] parameter (see `aliasing.toml`).

kgraph::graph!("tests/ui/graph/aliasing.toml");

fn main() {}
