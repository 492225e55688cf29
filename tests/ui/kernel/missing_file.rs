#[kgraph::kernel("does_not_exist.cu")]
pub fn axpb(x: &[f32], y: &mut [f32], a: f32, b: f32, n: i32);

fn main() {}
