//! Must fail to compile: an extent overflows C's `int`, which the kernel computes it in (see `extent_overflow.toml`).

kgraph::graph!("tests/ui/graph/extent_overflow.toml");

fn main() {}
