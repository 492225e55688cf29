//! Must fail to compile: `resident = true` on a spec whose kernel has no device-function form and
//! whose second node is a 2-D grid, on blocks of 48 threads (not whole warps; see
//! `resident_not_lowerable.toml`): one located error each.

kgraph::graph!("tests/ui/graph/resident_not_lowerable.toml");

fn main() {}
