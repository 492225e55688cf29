// `y` is `float*` in the kernel: the kernel writes it.
#[kgraph::kernel("ui.cu")]
pub fn axpb(x: &[f32], y: &[f32], a: f32, b: f32, n: i32);

fn main() {}
