//! Must fail to compile: an f64 buffer passed to an &[f32] parameter (see `dtype_mismatch_buffer.toml`).

kgraph::graph!("tests/ui/graph/dtype_mismatch_buffer.toml");

fn main() {}
