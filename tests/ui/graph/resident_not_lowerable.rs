//! Must fail to compile: `resident = true` on a spec whose kernel has no device-function form and
//! whose second node is a 2-D grid (see `resident_not_lowerable.toml`): one located error each.

kgraph::graph!("tests/ui/graph/resident_not_lowerable.toml");

fn main() {}
