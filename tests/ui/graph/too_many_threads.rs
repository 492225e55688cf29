//! Must fail to compile: a node of 2^32 threads, more than a checked launch allows (see `too_many_threads.toml`).

kgraph::graph!("tests/ui/graph/too_many_threads.toml");

fn main() {}
