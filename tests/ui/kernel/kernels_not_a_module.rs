#[kgraph::kernels]
fn not_a_module() {}

fn main() {}
