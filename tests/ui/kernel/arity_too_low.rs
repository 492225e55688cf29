#[kgraph::kernel("ui.cu")]
pub fn axpb(x: &[f32], y: &mut [f32], a: f32);

fn main() {}
