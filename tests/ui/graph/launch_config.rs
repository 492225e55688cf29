//! Must fail to compile: a block over 1024 threads and a grid that is not a whole number (see `launch_config.toml`).

kgraph::graph!("tests/ui/graph/launch_config.toml");

fn main() {}
