//! Must fail to compile: an i32 scalar passed to an f32 parameter, a float literal to an i32 one (see `dtype_mismatch_scalar.toml`).

kgraph::graph!("tests/ui/graph/dtype_mismatch_scalar.toml");

fn main() {}
