//! Must fail to compile: a `module` path that does not name the declarations' module (see `bad_module_path.toml`).

kgraph::graph!("tests/ui/graph/bad_module_path.toml");

fn main() {}
