// `x` is a `const float*` in the kernel.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: f32, y: &mut [f32], a: f32, b: f32, n: i32);

fn main() {}
