#[kgraph::kernel("mangled.cu")]
pub fn mangled(out: &mut [f32], n: i32);

fn main() {}
