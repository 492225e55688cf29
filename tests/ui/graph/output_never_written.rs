//! Must fail to compile: an output buffer that no node writes, read before written (see `output_never_written.toml`).

kgraph::graph!("tests/ui/graph/output_never_written.toml");

fn main() {}
