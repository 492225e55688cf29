// `x` is `const float*` in the kernel: it must not be lent mutably.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: &mut [f32], y: &mut [f32], a: f32, b: f32, n: i32);

fn main() {}
