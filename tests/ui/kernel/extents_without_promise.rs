// Extents are a promise kgraph cannot verify: without `unsafe(extents)` they are an error.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: &[f32; n], y: &mut [f32; n], a: f32, b: f32, n: i32);

fn main() {}
